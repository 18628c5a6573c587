use ide_mcp_runtime::mcp_resource;

/// Two variables with nothing between them.
#[mcp_resource(uri = "file:///{dir}{name}")]
fn adjacent(dir: String, name: String) -> String {
    dir + &name
}

/// A level-2 operator.
#[mcp_resource(uri = "file:///{+path}")]
fn reserved(path: String) -> String {
    path
}

/// A variable that never ends.
#[mcp_resource(uri = "file:///{path")]
fn unclosed(path: String) -> String {
    path
}

fn main() {}
