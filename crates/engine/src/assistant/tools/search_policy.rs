//! `search_policy`: full-text search over the policy documents in force;
//! every passage carries its document title, section and version.

use super::{SEARCH_POLICY, scope};
use agents::{Provenance, Tool, ToolContext, ToolOutcome, parse_arguments};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const MIN_QUERY_CHARS: usize = 2;
const MAX_QUERY_CHARS: usize = 500;
const DEFAULT_LIMIT: usize = 3;
const MAX_LIMIT: usize = 5;
/// Hex digits of a version hash the model reads: enough to tell versions
/// of one document apart, a fifth of the tokens of the whole hash.
pub const SHORT_VERSION_CHARS: usize = 12;

#[derive(Debug, Clone, Copy, Default)]
pub struct SearchPolicy;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    query: String,
    #[serde(default)]
    limit: Option<usize>,
}

/// What the model reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicySearchResult {
    pub query: String,
    pub passages: Vec<PolicyPassage>,
}

/// One passage, citable as `reference` at `version`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyPassage {
    /// `returns-policy:section-3`.
    pub reference: String,
    pub document: String,
    pub section: String,
    /// The document version the passage was read from, shortened to
    /// [`SHORT_VERSION_CHARS`]. The full content hash is in the result's
    /// provenance, which the transcript keeps and the evidence cites.
    pub version: String,
    pub passage: String,
}

#[async_trait]
impl Tool for SearchPolicy {
    fn name(&self) -> &str {
        SEARCH_POLICY
    }

    fn description(&self) -> &str {
        "Search the shop's policy documents in force (returns, refunds, shipping). Returns the best matching passages with their reference (e.g. returns-policy:section-3), document title, section heading and version; cite them. `not_found` means no passage matched; `unknown` means the search failed and the question is unanswered, which is not the same as there being no rule."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What to look for, in plain words, e.g. \"return unopened items within 30 days\"."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": "How many passages to return (default 3)."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> ToolOutcome {
        let scope = match scope(ctx) {
            Ok(scope) => scope,
            Err(outcome) => return outcome,
        };
        let args: Args = match parse_arguments(args) {
            Ok(args) => args,
            Err(outcome) => return outcome,
        };
        let query = args.query.trim();
        let chars = query.chars().count();
        if !(MIN_QUERY_CHARS..=MAX_QUERY_CHARS).contains(&chars) {
            return ToolOutcome::invalid_arguments(format!(
                "query must be {MIN_QUERY_CHARS} to {MAX_QUERY_CHARS} characters"
            ));
        }
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return ToolOutcome::invalid_arguments(format!("limit must be 1 to {MAX_LIMIT}"));
        }
        let hits = match scope.tools.search_policy(query, limit) {
            Ok(hits) => hits,
            Err(error) => {
                tracing::warn!(%error, "policy search failed");
                return ToolOutcome::unknown(
                    "the policy search failed, so the question is unanswered (this does not mean there is no rule)",
                );
            }
        };
        if hits.is_empty() {
            return ToolOutcome::not_found(format!("a policy passage matching {query:?}"));
        }
        let provenance: Vec<Provenance> = hits
            .iter()
            .map(|hit| Provenance {
                source: hit.reference.clone(),
                title: hit.document_title.clone(),
                section: Some(hit.section_heading.clone()),
                version: hit.version.clone(),
                quote: Some(hit.passage.clone()),
            })
            .collect();
        let passages: Vec<PolicyPassage> = hits
            .into_iter()
            .map(|hit| PolicyPassage {
                version: short_version(&hit.version),
                reference: hit.reference,
                document: hit.document_title,
                section: hit.section_heading,
                passage: hit.passage,
            })
            .collect();
        scope.ledger().read(&provenance);
        let result = PolicySearchResult {
            query: query.to_owned(),
            passages,
        };
        ToolOutcome::found(
            serde_json::to_value(&result).unwrap_or_default(),
            provenance,
        )
    }
}

/// The first [`SHORT_VERSION_CHARS`] characters of `version`.
fn short_version(version: &str) -> String {
    version.chars().take(SHORT_VERSION_CHARS).collect()
}
