//! The task kinds Countersign's groups speak, with their schemas. A group
//! accepts these; which peer may send which kind is the allowlist's say.

use gateway::{KindError, KindRegistry, TaskKind};
use serde_json::json;

/// `returns.inspection`: what the returns desk recorded about an order's
/// returned parcel.
pub const RETURNS_INSPECTION: &str = "returns.inspection";

/// Every kind, registered with its input and result schemas.
///
/// # Errors
/// [`KindError`] if a schema below is not valid JSON Schema (a test
/// builds the catalogue, so this cannot ship broken).
pub fn catalogue() -> Result<KindRegistry, KindError> {
    let mut kinds = KindRegistry::default();
    let kind = TaskKind::parse(RETURNS_INSPECTION).map_err(|e| KindError {
        kind: RETURNS_INSPECTION.to_owned(),
        which: "name",
        why: e.to_string(),
    })?;
    kinds.register(
        kind,
        "What the returns desk recorded about an order's returned parcel: when it \
         arrived, whether it was sealed, opened or damaged, and the inspector's note.",
        json!({
            "type": "object",
            "required": ["order_id"],
            "properties": { "order_id": { "type": "string", "minLength": 1, "maxLength": 64 } },
            "additionalProperties": false
        }),
        json!({
            "type": "object",
            "required": ["condition"],
            "properties": {
                "received_at": { "type": ["string", "null"], "format": "date-time" },
                "condition": { "enum": ["sealed", "opened", "damaged", "unknown"] },
                "note": { "type": ["string", "null"], "maxLength": 2000 }
            },
            "additionalProperties": false
        }),
    )?;
    Ok(kinds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway::TaskKinds;

    #[test]
    fn the_catalogue_builds_and_checks_an_inspection_request() {
        let kinds = catalogue().unwrap();
        let kind = TaskKind::parse(RETURNS_INSPECTION).unwrap();
        assert_eq!(
            kinds.check_input(&kind, &json!({ "order_id": "4821" })),
            Some(Ok(()))
        );
        assert!(matches!(
            kinds.check_input(&kind, &json!({ "order_id": "" })),
            Some(Err(_))
        ));
        assert_eq!(
            kinds.check_result(&kind, &json!({ "condition": "unknown", "note": null })),
            Some(Ok(()))
        );
    }
}
