//! The names an envelope carries: agent groups, task keys, task kinds and
//! signing keys. Each is checked when it is made or read, so a name that
//! reaches a journal, a route or a key lookup is always well formed.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a name was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {value:?} is not valid: {rule}")]
pub struct NameError {
    pub what: &'static str,
    pub value: String,
    pub rule: &'static str,
}

fn check(
    what: &'static str,
    value: &str,
    max: usize,
    allowed: fn(char) -> bool,
    rule: &'static str,
) -> Result<(), NameError> {
    if value.is_empty() || value.len() > max || !value.chars().all(allowed) {
        return Err(NameError {
            what,
            value: value.chars().take(80).collect(),
            rule,
        });
    }
    Ok(())
}

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $what:literal, $max:literal, $allowed:expr, $rule:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// # Errors
            /// [`NameError`] when the text breaks the rule for this name.
            pub fn parse(value: &str) -> Result<Self, NameError> {
                check($what, value, $max, $allowed, $rule)?;
                Ok(Self(value.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = NameError;
            fn try_from(value: String) -> Result<Self, NameError> {
                check($what, &value, $max, $allowed, $rule)?;
                Ok(Self(value))
            }
        }

        impl From<$name> for String {
            fn from(name: $name) -> String {
                name.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

fn group_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
}

fn key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':')
}

fn kind_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
}

name_type!(
    /// An agent group (`support`, `returns`): one Countersign instance with
    /// its own database, keys and journal.
    GroupName,
    "group name",
    63,
    group_char,
    "1–63 characters of a–z, 0–9 and '-'"
);

name_type!(
    /// A task's key, chosen by the sending group and unique within it: the
    /// receiver's inbox recognises a resend by (sender group, task key).
    TaskKey,
    "task key",
    128,
    key_char,
    "1–128 characters of A–Z, a–z, 0–9, '-', '_', '.' and ':'"
);

name_type!(
    /// A registered kind of task (`returns.inspection`), with a schema for
    /// its input and its result.
    TaskKind,
    "task kind",
    64,
    kind_char,
    "1–64 characters of a–z, 0–9, '.', '_' and '-'"
);

name_type!(
    /// The name of one of a group's signing keys; its versions rotate.
    KeyId,
    "key id",
    64,
    key_char,
    "1–64 characters of A–Z, a–z, 0–9, '-', '_', '.' and ':'"
);

/// One version of one group's signing key: what a signature names and what
/// a receiver looks up among the keys it has pinned.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyRef {
    pub group: GroupName,
    pub key_id: KeyId,
    pub version: u32,
}

impl KeyRef {
    /// The key a JWS `kid` (`group/key_id/vN`) names; None for any other
    /// text.
    #[must_use]
    pub fn from_kid(kid: &str) -> Option<KeyRef> {
        let mut parts = kid.split('/');
        let (group, key_id, version) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        Some(KeyRef {
            group: GroupName::parse(group).ok()?,
            key_id: KeyId::parse(key_id).ok()?,
            version: version.strip_prefix('v')?.parse().ok()?,
        })
    }
}

impl fmt::Display for KeyRef {
    /// The JWS `kid` of a signature made with this key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/v{}", self.group, self.key_id, self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_name_with_capitals_spaces_or_nothing_is_refused_with_the_rule() {
        for bad in ["Support", "sup port", "", "a/b"] {
            let error = GroupName::parse(bad).unwrap_err();
            assert!(error.to_string().contains("a–z, 0–9 and '-'"), "{error}");
        }
        assert_eq!(
            GroupName::parse("returns-eu").unwrap().as_str(),
            "returns-eu"
        );
    }

    #[test]
    fn a_task_key_read_from_json_is_checked_like_one_parsed_from_text() {
        let parsed: Result<TaskKey, _> = serde_json::from_str("\"tsk 1\"");
        assert!(parsed.is_err());
        let parsed: TaskKey = serde_json::from_str("\"support:tsk_01\"").unwrap();
        assert_eq!(parsed.as_str(), "support:tsk_01");
    }

    #[test]
    fn a_key_reference_names_group_key_and_version_in_its_kid() {
        let key = KeyRef {
            group: GroupName::parse("support").unwrap(),
            key_id: KeyId::parse("gateway").unwrap(),
            version: 3,
        };
        assert_eq!(key.to_string(), "support/gateway/v3");
        assert_eq!(KeyRef::from_kid("support/gateway/v3"), Some(key));
        for bad in [
            "support/gateway",
            "support/gateway/3",
            "support/gateway/v3/x",
            "Sup/gateway/v1",
        ] {
            assert_eq!(KeyRef::from_kid(bad), None, "{bad}");
        }
    }
}
