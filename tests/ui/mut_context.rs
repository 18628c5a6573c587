use ide_mcp_runtime::mcp_tool;

struct Counter(u64);

/// Increments the counter.
#[mcp_tool]
fn increment(counter: &mut Counter) -> u64 {
    counter.0 += 1;
    counter.0
}

fn main() {}
