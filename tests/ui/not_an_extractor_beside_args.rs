use ide_mcp_runtime::mcp_tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    text: String,
}

/// Beside `#[args]`, a parameter without `#[arg]` must be taken from the call.
#[mcp_tool]
fn echo(#[args] args: Args, count: u32) -> String {
    args.text.repeat(count as usize)
}

fn main() {}
