//! `countersign`: the server and its administration commands.

// mimalloc instead of the system allocator: a request allocates and frees
// many small buffers on every thread (rows, JSON, HTTP), which glibc's
// malloc serves with lock and consolidation work that showed up as a tenth
// of the process's CPU in the refund benchmark (README "Benchmarks").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    server::cli::main()
}
