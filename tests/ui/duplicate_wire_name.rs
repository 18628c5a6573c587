use ide_mcp_runtime::mcp_tool;

/// Opens a file.
#[mcp_tool]
fn open(file_path: String, #[arg(rename = "filePath")] other_path: String) -> String {
    file_path + &other_path
}

fn main() {}
