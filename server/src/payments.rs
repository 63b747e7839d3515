//! The payment provider the executor talks to, over real HTTP: the sandbox
//! (mounted in this server by default, or elsewhere) or Stripe, each call
//! counted and timed for `/metrics`.

use crate::config::{PaymentProviderKind, Settings};
use crate::metrics::provider::MeteredProvider;
use connectors::HttpTimeouts;
use connectors::PaymentProvider;
use connectors::sandbox::{FaultUpdate, SandboxConfig, SandboxProvider, SandboxState};
use connectors::stripe::{StripeConfig, StripeProvider};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The provider, plus the sandbox's parts when the sandbox is in use.
pub struct Payments {
    pub provider: Arc<dyn PaymentProvider>,
    /// The HTTP client of the sandbox (for its ledger), if the sandbox is the provider.
    pub sandbox_client: Option<SandboxProvider>,
    /// The sandbox this server mounts, if any.
    pub mounted: Option<SandboxState>,
}

/// # Errors
/// Invalid provider settings (URL, key, fault plan).
pub fn build(settings: &Settings, bound: SocketAddr) -> anyhow::Result<Payments> {
    let timeouts = HttpTimeouts {
        connect: Duration::from_millis(settings.payment_connect_timeout_ms),
        request: Duration::from_millis(settings.payment_timeout_ms),
    };
    let mounted = if settings.sandbox_path.is_empty() {
        None
    } else {
        let state = SandboxState::new(SandboxConfig {
            secret_key: settings.sandbox_secret_key.clone(),
            ..SandboxConfig::default()
        })?;
        if let Some(json) = &settings.sandbox_faults {
            let update: FaultUpdate = serde_json::from_str(json)
                .map_err(|e| anyhow::anyhow!("sandbox_faults is not a valid fault plan: {e}"))?;
            state.set_faults(update)?;
        }
        Some(state)
    };
    match settings.payment_provider {
        PaymentProviderKind::Sandbox => {
            let (base, secret_key) = match (&settings.payment_base_url, &mounted) {
                (Some(url), _) => (
                    url.clone(),
                    settings.sandbox_secret_key.clone().ok_or_else(|| {
                        anyhow::anyhow!("sandbox_secret_key is required with payment_base_url")
                    })?,
                ),
                (None, None) => anyhow::bail!(
                    "the sandbox provider needs payment_base_url or a sandbox_path to mount it"
                ),
                (None, Some(state)) => {
                    // Talk to our own mount over loopback: real HTTP all the same.
                    let host = if bound.ip().is_unspecified() {
                        "127.0.0.1".to_owned()
                    } else {
                        bound.ip().to_string()
                    };
                    let base = format!("http://{host}:{}{}", bound.port(), settings.sandbox_path);
                    (base, state.secret_key())
                }
            };
            let client = SandboxProvider::new(&base, secret_key, timeouts)?;
            Ok(Payments {
                provider: MeteredProvider::wrap(Arc::new(client.clone())),
                sandbox_client: Some(client),
                mounted,
            })
        }
        PaymentProviderKind::Stripe => {
            let secret_key = settings
                .stripe_secret_key
                .clone()
                .ok_or_else(|| anyhow::anyhow!("stripe_secret_key is required"))?;
            let provider = StripeProvider::new(StripeConfig {
                base_url: settings
                    .payment_base_url
                    .clone()
                    .unwrap_or_else(|| connectors::stripe::STRIPE_API_BASE.to_owned()),
                secret_key,
                timeouts,
            })?;
            Ok(Payments {
                provider: MeteredProvider::wrap(Arc::new(provider)),
                sandbox_client: None,
                mounted,
            })
        }
    }
}
