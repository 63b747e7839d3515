//! Who is asking, as the application authenticated it. Tools scope what they
//! return by this (a customer reads only their own orders); the model never
//! sees or sets it, so no prompt can widen it.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::transcript::ToolCall;

/// The authenticated caller of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    pub user_id: String,
    pub roles: Vec<String>,
    /// Set when the caller is a customer: the only customer whose records
    /// tools may return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_id: Option<String>,
}

impl Principal {
    /// Whether the principal holds `role`.
    #[must_use]
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|held| held == role)
    }
}

/// What a tool receives besides its arguments: the principal, any typed
/// values the application attached, and which agent and call this is.
///
/// Built by the application; the runtime only fills in the agent and call
/// id for each call. Cloning is cheap.
#[derive(Clone)]
pub struct ToolContext {
    principal: Arc<Principal>,
    extensions: Extensions,
    agent: Option<String>,
    call_id: Option<String>,
    /// Every call of the model response this call came in, this one too.
    batch: Arc<[ToolCall]>,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("principal", &self.principal)
            .field("extensions", &self.extensions)
            .field("agent", &self.agent)
            .field("call_id", &self.call_id)
            .field("batch", &self.batch.len())
            .finish()
    }
}

impl ToolContext {
    /// A context for `principal` with no extensions.
    #[must_use]
    pub fn new(principal: Principal) -> Self {
        Self {
            principal: Arc::new(principal),
            extensions: Extensions::default(),
            agent: None,
            call_id: None,
            batch: Arc::new([]),
        }
    }

    /// Attach a typed value (a conversation id, a clock, a repository
    /// handle…), replacing any earlier value of the same type.
    #[must_use]
    pub fn with_extension<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The authenticated caller.
    #[must_use]
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// The attached value of type `T`, if any.
    #[must_use]
    pub fn extension<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }

    /// The agent making this call (set by the runtime).
    #[must_use]
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    /// The model's id for this call (set by the runtime), useful as a
    /// correlation id in a tool's own records.
    #[must_use]
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// The calls the model made in the same response as this one, in its
    /// order, this one included (set by the runtime). They run concurrently,
    /// so a tool whose rule depends on another call (do not propose while a
    /// question is being asked) must look here, not at what has finished.
    #[must_use]
    pub fn batch(&self) -> &[ToolCall] {
        &self.batch
    }

    /// The same context for one specific call of `batch`.
    pub(crate) fn for_call(&self, agent: &str, call_id: &str, batch: &Arc<[ToolCall]>) -> Self {
        Self {
            principal: Arc::clone(&self.principal),
            extensions: self.extensions.clone(),
            agent: Some(agent.to_owned()),
            call_id: Some(call_id.to_owned()),
            batch: Arc::clone(batch),
        }
    }
}

/// A map from type to one value of that type, shared read-only.
#[derive(Clone, Default)]
pub struct Extensions {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl Extensions {
    /// Store `value`, replacing any earlier value of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if any.
    #[must_use]
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
    }
}

impl fmt::Debug for Extensions {
    /// Only the count: extensions may hold handles or secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.values.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct ConversationId(u64);

    #[test]
    fn extensions_are_found_by_type() {
        let ctx = ToolContext::new(Principal {
            user_id: "u1".into(),
            roles: vec!["customer".into()],
            customer_id: Some("c1".into()),
        })
        .with_extension(ConversationId(7));
        assert_eq!(ctx.extension::<ConversationId>(), Some(&ConversationId(7)));
        assert_eq!(ctx.extension::<String>(), None);
        assert!(ctx.principal().has_role("customer"));
        let batch: Arc<[ToolCall]> = vec![
            ToolCall::new("call_1", "get_order", serde_json::json!({})),
            ToolCall::new("call_2", "search_policy", serde_json::json!({})),
        ]
        .into();
        let call = ctx.for_call("coordinator", "call_1", &batch);
        assert_eq!(call.agent(), Some("coordinator"));
        assert_eq!(call.call_id(), Some("call_1"));
        assert_eq!(call.batch().len(), 2);
        assert_eq!(call.extension::<ConversationId>(), Some(&ConversationId(7)));
    }
}
