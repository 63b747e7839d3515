//! The tool port: how an agent reaches documents and live records.

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::ToolContext;
use crate::outcome::ToolOutcome;

/// A capability an agent may call. Tools investigate and propose; anything
/// that acts on the world belongs to application code behind an approval.
///
/// `call` has no error type on purpose: a failure is an answer the model must
/// see ([`ToolOutcome::Unknown`]), not an exception that ends the turn.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Function name the model calls (ASCII letters, digits, `_`, `-`).
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// JSON Schema of the arguments object.
    fn parameters(&self) -> Value;

    /// Run the tool. `ctx` is the caller's identity as established by the
    /// application; `args` is whatever the model sent, already checked to be
    /// a JSON object, and must be validated (see [`parse_arguments`]).
    async fn call(&self, ctx: &ToolContext, args: Value) -> ToolOutcome;

    /// How long one call may take, given the runner's limit for every
    /// tool. A tool that runs work of its own with its own limits (a
    /// subagent with a step budget) asks for more here.
    fn time_limit(&self, runner_limit: Option<std::time::Duration>) -> Option<std::time::Duration> {
        runner_limit
    }

    /// The specification sent to the model.
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            parameters: self.parameters(),
        }
    }
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// Deserialize the model's arguments into `T`.
///
/// # Errors
///
/// [`ToolOutcome::InvalidArguments`] with serde's explanation, ready to be
/// returned from [`Tool::call`] so the model can correct itself.
pub fn parse_arguments<T: DeserializeOwned>(args: Value) -> Result<T, ToolOutcome> {
    serde_json::from_value(args)
        .map_err(|err| ToolOutcome::invalid_arguments(format!("arguments do not fit: {err}")))
}
