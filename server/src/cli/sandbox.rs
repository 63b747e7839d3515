//! `countersign sandbox --listen ADDR`: the sandbox payment provider on its
//! own, so it survives restarts of the server (crash tests, demos).

use crate::config::Settings;
use connectors::sandbox::{FaultUpdate, SandboxConfig, SandboxState};
use secrecy::{ExposeSecret, SecretString};
use std::net::SocketAddr;

pub async fn run(
    listen: SocketAddr,
    secret_key: Option<String>,
    settings: &Settings,
) -> anyhow::Result<()> {
    let given = secret_key
        .map(SecretString::from)
        .or_else(|| settings.sandbox_secret_key.clone());
    let generated = given.is_none();
    let state = SandboxState::new(SandboxConfig {
        secret_key: given,
        ..SandboxConfig::default()
    })?;
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
    if generated {
        // Printed once, here only: clients need it (COUNTERSIGN_SANDBOX_SECRET_KEY).
        println!(
            "sandbox secret key (generated): {}",
            state.secret_key().expose_secret()
        );
    }
    tokio::select! {
        served = connectors::sandbox::serve_standalone(listener, state) => served?,
        () = crate::startup::shutdown_signal() => {}
    }
    Ok(())
}
