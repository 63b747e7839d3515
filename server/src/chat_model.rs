//! Chooses the model that drives the chat agents from the settings: the
//! offline rules (the embedded default) or an OpenAI-compatible server.

use crate::config::{ModelBackend, ModelOutputCapField, Settings};
use engine::assistant::team::TeamOptions;
use engine::assistant::{Assistant, OfflineRules, OpenAiCompatible, OpenAiConfig, OutputCapField};
use std::sync::Arc;
use std::time::Duration;

/// The agents on the configured model.
///
/// # Errors
/// An OpenAI-compatible backend whose URL or model id is unusable.
pub fn assistant(settings: &Settings) -> anyhow::Result<Assistant> {
    Ok(agents_on_model(settings)?.with_subagent_limit(settings.subagents_per_conversation))
}

fn agents_on_model(settings: &Settings) -> anyhow::Result<Assistant> {
    let team = TeamOptions {
        returns_desk: settings.gateway_returns_desk.is_some(),
        carrier: settings.carrier_enabled(),
    };
    match settings.model_backend {
        ModelBackend::Offline => Ok(Assistant::for_team(Arc::new(OfflineRules::new()), team)?),
        ModelBackend::Openai => {
            let base_url = settings.model_base_url.clone().unwrap_or_default();
            let model = settings.model_name.clone().unwrap_or_default();
            let mut config = OpenAiConfig::new(base_url, model);
            config.api_key = settings.model_api_key.clone();
            config.timeout = Duration::from_secs(settings.model_timeout_seconds);
            config.temperature = Some(settings.model_temperature);
            config.max_output_tokens = Some(settings.model_max_output_tokens);
            config.output_cap_field = match settings.model_output_cap_field {
                ModelOutputCapField::MaxTokens => OutputCapField::MaxTokens,
                ModelOutputCapField::MaxCompletionTokens => OutputCapField::MaxCompletionTokens,
            };
            let model = OpenAiCompatible::new(config.clone())?;
            tracing::info!(model = ?config, "chat agents use an OpenAI-compatible model");
            Ok(Assistant::for_team(Arc::new(model), team)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offline_rules_are_the_default_and_openai_is_selectable() {
        let offline = assistant(&Settings::default()).map(|a| a.model_name().to_owned());
        assert_eq!(offline.ok().as_deref(), Some("countersign-offline-rules"));
        let settings = Settings {
            model_backend: ModelBackend::Openai,
            model_base_url: Some("http://127.0.0.1:11434/v1".into()),
            model_name: Some("qwen2.5:7b".into()),
            ..Settings::default()
        };
        let openai = assistant(&settings).map(|a| a.model_name().to_owned());
        assert_eq!(openai.ok().as_deref(), Some("qwen2.5:7b"));
    }
}
