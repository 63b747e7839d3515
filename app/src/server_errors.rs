//! How the engine's errors reach people: one mapping, used by the server
//! functions and the JSON API alike. Internal causes are logged, not shown.

use crate::error::AppError;
use domain::proposal::{ApproveError, TransitionError};
use engine::approvals::DecisionError;
use engine::execution::resolve::ResolveError;
use engine::proposals::SubmitError;

pub fn submit_error(error: SubmitError) -> AppError {
    match error {
        SubmitError::NotAllowed | SubmitError::AgentNotYours { .. } => {
            AppError::Forbidden(error.to_string())
        }
        SubmitError::TooManySubmissions { .. } => AppError::Throttled(error.to_string()),
        SubmitError::OverlapsLive { .. } => AppError::Conflict(error.to_string()),
        SubmitError::OrderNotFound(_) | SubmitError::NotYourOrder(_) => {
            // A customer learns nothing about other people's orders.
            AppError::NotFound(format!("no order {}", order_of(&error)))
        }
        SubmitError::Conflict(_) => AppError::Conflict(error.to_string()),
        SubmitError::Storage(inner) => crate::server::internal(&inner),
        other => AppError::Invalid(other.to_string()),
    }
}

fn order_of(error: &SubmitError) -> String {
    match error {
        SubmitError::OrderNotFound(id) | SubmitError::NotYourOrder(id) => id.clone(),
        _ => String::new(),
    }
}

pub fn decision_error(error: DecisionError) -> AppError {
    match error {
        DecisionError::NotFound(_) => AppError::NotFound(error.to_string()),
        DecisionError::Denied(denied) => match denied {
            ApproveError::NotAnApprover
            | ApproveError::SelfApproval
            | ApproveError::SpokeInConversation
            | ApproveError::OverLimit { .. }
            | ApproveError::AlreadyApprovedByYou => AppError::Forbidden(denied.to_string()),
            ApproveError::NotAwaitingApproval { .. }
            | ApproveError::Superseded { .. }
            | ApproveError::Expired { .. }
            | ApproveError::DigestMismatch
            | ApproveError::DigestInvalid => AppError::Conflict(denied.to_string()),
        },
        DecisionError::Invalid(message) => AppError::Invalid(message),
        DecisionError::ProviderUnavailable(_) => AppError::Unavailable(error.to_string()),
        DecisionError::Conflict(_) => AppError::Conflict(error.to_string()),
        DecisionError::Transition(TransitionError::NotAllowed { .. }) => {
            AppError::Conflict(error.to_string())
        }
        DecisionError::Transition(other) => AppError::Invalid(other.to_string()),
        DecisionError::Storage(inner) => crate::server::internal(&inner),
    }
}

pub fn resolve_error(error: ResolveError) -> AppError {
    match error {
        ResolveError::NotFound(_) => AppError::NotFound(error.to_string()),
        ResolveError::Forbidden => AppError::Forbidden(error.to_string()),
        ResolveError::Invalid(message) => AppError::Invalid(message),
        ResolveError::NotResolvable { .. }
        | ResolveError::ProviderDisagrees(_)
        | ResolveError::Conflict(_) => AppError::Conflict(error.to_string()),
        ResolveError::ProviderUnavailable(_) => AppError::Unavailable(error.to_string()),
        ResolveError::Storage(inner) => crate::server::internal(&inner),
    }
}
