//! `countersign sandbox --listen ADDR`: the sandbox payment provider on its
//! own, so it survives restarts of the server (crash tests, demos).

use crate::config::Settings;
use connectors::sandbox::{FaultUpdate, SandboxConfig, SandboxState};
use std::net::SocketAddr;

pub async fn run(listen: SocketAddr, settings: &Settings) -> anyhow::Result<()> {
    let state = SandboxState::new(SandboxConfig::default())?;
    if let Some(json) = &settings.sandbox_faults {
        let update: FaultUpdate = serde_json::from_str(json)
            .map_err(|e| anyhow::anyhow!("sandbox_faults is not a valid fault plan: {e}"))?;
        state.set_faults(update)?;
    }
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!(
        "sandbox payment provider listening on http://{}",
        listener.local_addr()?
    );
    tokio::select! {
        served = connectors::sandbox::serve_standalone(listener, state) => served?,
        () = crate::startup::shutdown_signal() => {}
    }
    Ok(())
}
