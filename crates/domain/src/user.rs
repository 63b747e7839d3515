//! User names and the user summary shown in the interface.

use crate::role::RoleSet;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A login name: 2–64 characters of lower-case ASCII letters, digits, `.`, `_`, `-`,
/// starting with a letter or digit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct UserName(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UserNameError {
    #[error("user name must be 2 to 64 characters long")]
    Length,
    #[error(
        "user name may contain only lower-case letters, digits, '.', '_' and '-', and must start with a letter or digit"
    )]
    Characters,
}

impl UserName {
    /// # Errors
    /// [`UserNameError`] when the name is too short, too long or has other characters.
    pub fn parse(raw: &str) -> Result<Self, UserNameError> {
        let name = raw.trim().to_ascii_lowercase();
        if !(2..=64).contains(&name.len()) {
            return Err(UserNameError::Length);
        }
        let valid_char =
            |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c);
        let starts_well = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if !starts_well || !name.chars().all(valid_char) {
            return Err(UserNameError::Characters);
        }
        Ok(UserName(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for UserName {
    type Error = UserNameError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        UserName::parse(&value)
    }
}

impl From<UserName> for String {
    fn from(value: UserName) -> Self {
        value.0
    }
}

impl fmt::Display for UserName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the interface knows about a signed-in user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserSummary {
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub roles: RoleSet,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn user_names_are_trimmed_and_lower_cased() {
        assert_eq!(
            UserName::parse("  Approver2 ").unwrap().as_str(),
            "approver2"
        );
    }

    #[test]
    fn user_names_with_odd_characters_are_refused() {
        assert_eq!(UserName::parse("a"), Err(UserNameError::Length));
        assert_eq!(UserName::parse("-abc"), Err(UserNameError::Characters));
        assert_eq!(UserName::parse("a b"), Err(UserNameError::Characters));
        assert_eq!(UserName::parse("<script>"), Err(UserNameError::Characters));
    }
}
