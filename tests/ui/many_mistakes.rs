use ide_mcp_runtime::mcp_tool;

// Every mistake of one item is reported in one build.
#[mcp_tool(name = "bad name", colour = "blue")]
fn everything<T>(self_: &mut T, (a, b): (u8, u8), text: impl AsRef<str>) {
    let _ = (self_, a, b, text);
}

fn main() {}
