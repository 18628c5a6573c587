use ide_mcp_runtime::mcp_tool;

struct Editor;

impl Editor {
    /// Reports the editor's name.
    #[mcp_tool]
    fn name(&self) -> String {
        "editor".into()
    }
}

fn main() {}
