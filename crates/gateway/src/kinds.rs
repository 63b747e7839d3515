//! The task kinds a group accepts, each with a JSON Schema for its input and
//! one for its result. The receiver checks a task's input before accepting
//! it, the sender checks a result before using it as evidence; the same
//! schemas are what the group's agent card advertises as its skills.

use crate::admission::TaskKinds;
use crate::names::TaskKind;
use jsonschema::Validator;
use serde_json::Value;
use std::collections::BTreeMap;

/// A schema that is not a valid JSON Schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {which} schema of {kind} is not a valid JSON Schema: {why}")]
pub struct KindError {
    pub kind: String,
    pub which: &'static str,
    pub why: String,
}

struct Kind {
    description: String,
    input_schema: Value,
    result_schema: Value,
    input: Validator,
    result: Validator,
}

/// The kinds a group accepts.
#[derive(Default)]
pub struct KindRegistry(BTreeMap<TaskKind, Kind>);

/// At most this many schema violations are named in one refusal.
const NAMED_VIOLATIONS: usize = 3;

fn compile(kind: &TaskKind, which: &'static str, schema: &Value) -> Result<Validator, KindError> {
    jsonschema::validator_for(schema).map_err(|e| KindError {
        kind: kind.to_string(),
        which,
        why: e.to_string(),
    })
}

/// Ok, or the first violations, each at its JSON pointer.
fn check(validator: &Validator, value: &Value) -> Result<(), String> {
    let violations: Vec<String> = validator
        .iter_errors(value)
        .take(NAMED_VIOLATIONS)
        .map(|error| {
            let at = error.instance_path().to_string();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            format!("at {at}: {error}")
        })
        .collect();
    if violations.is_empty() {
        Ok(())
    } else {
        Err(violations.join("; "))
    }
}

impl KindRegistry {
    /// Accepts `kind` with these schemas.
    ///
    /// # Errors
    /// [`KindError`] when a schema is not a valid JSON Schema.
    pub fn register(
        &mut self,
        kind: TaskKind,
        description: &str,
        input_schema: Value,
        result_schema: Value,
    ) -> Result<(), KindError> {
        let input = compile(&kind, "input", &input_schema)?;
        let result = compile(&kind, "result", &result_schema)?;
        self.0.insert(
            kind,
            Kind {
                description: description.to_owned(),
                input_schema,
                result_schema,
                input,
                result,
            },
        );
        Ok(())
    }

    /// Whether `kind` is registered here.
    #[must_use]
    pub fn knows(&self, kind: &TaskKind) -> bool {
        self.0.contains_key(kind)
    }

    /// Whether `result` is a valid result of `kind`; None for a kind not
    /// registered here.
    pub fn check_result(&self, kind: &TaskKind, result: &Value) -> Option<Result<(), String>> {
        self.0.get(kind).map(|k| check(&k.result, result))
    }

    /// Each kind with its description and its input and result schemas.
    pub fn describe(&self) -> impl Iterator<Item = (&TaskKind, &str, &Value, &Value)> {
        self.0.iter().map(|(kind, k)| {
            (
                kind,
                k.description.as_str(),
                &k.input_schema,
                &k.result_schema,
            )
        })
    }
}

impl TaskKinds for KindRegistry {
    fn check_input(&self, kind: &TaskKind, input: &Value) -> Option<Result<(), String>> {
        self.0.get(kind).map(|k| check(&k.input, input))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn inspections() -> KindRegistry {
        let mut kinds = KindRegistry::default();
        kinds
            .register(
                TaskKind::parse("returns.inspection").unwrap(),
                "What the returns desk found in a returned parcel",
                json!({
                    "type": "object",
                    "required": ["order_id"],
                    "properties": { "order_id": { "type": "string", "minLength": 1 } },
                    "additionalProperties": false
                }),
                json!({
                    "type": "object",
                    "required": ["condition"],
                    "properties": {
                        "condition": { "enum": ["sealed", "opened", "damaged", "unknown"] }
                    }
                }),
            )
            .unwrap();
        kinds
    }

    #[test]
    fn an_input_the_kinds_schema_rejects_is_refused_with_where_and_why() {
        let kinds = inspections();
        let kind = TaskKind::parse("returns.inspection").unwrap();
        assert_eq!(
            kinds.check_input(&kind, &json!({ "order_id": "4821" })),
            Some(Ok(()))
        );
        let why = kinds
            .check_input(&kind, &json!({ "order_id": 4821 }))
            .unwrap()
            .unwrap_err();
        assert!(why.starts_with("at /order_id: "), "{why}");
        assert!(why.contains("string"), "{why}");
        let why = kinds.check_input(&kind, &json!({})).unwrap().unwrap_err();
        assert!(why.contains("order_id"), "{why}");
    }

    #[test]
    fn a_result_outside_the_kinds_schema_is_not_taken_as_evidence() {
        let kinds = inspections();
        let kind = TaskKind::parse("returns.inspection").unwrap();
        assert_eq!(
            kinds.check_result(&kind, &json!({ "condition": "sealed" })),
            Some(Ok(()))
        );
        assert!(matches!(
            kinds.check_result(&kind, &json!({ "condition": "like new" })),
            Some(Err(_))
        ));
        let other = TaskKind::parse("returns.label").unwrap();
        assert_eq!(kinds.check_result(&other, &json!({})), None);
    }

    #[test]
    fn a_schema_that_is_not_json_schema_is_refused_when_the_kind_is_registered() {
        let mut kinds = KindRegistry::default();
        let error = kinds
            .register(
                TaskKind::parse("broken").unwrap(),
                "",
                json!({ "type": "no-such-type" }),
                json!({}),
            )
            .unwrap_err();
        assert_eq!(error.which, "input");
    }
}
