//! `countersign`: the server and its administration commands.

fn main() -> anyhow::Result<()> {
    server::cli::main()
}
