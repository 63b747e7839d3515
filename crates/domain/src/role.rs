//! Roles a user may hold. A user may hold several.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Sees and chats about their own orders only.
    Customer,
    /// Signs off (or rejects) specific proposals.
    Approver,
    /// Reads audit trails.
    Manager,
    /// Manages users, roles, policies, limits and widget sites.
    Admin,
    /// A service account for an outside agent system (bearer tokens).
    Agent,
    /// A shop backend that feeds orders and records refunds made elsewhere
    /// (bearer tokens).
    Shop,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Role::Customer,
        Role::Approver,
        Role::Manager,
        Role::Admin,
        Role::Agent,
        Role::Shop,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            Role::Customer => "customer",
            Role::Approver => "approver",
            Role::Manager => "manager",
            Role::Admin => "admin",
            Role::Agent => "agent",
            Role::Shop => "shop",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role {0:?}; expected one of customer, approver, manager, admin, agent, shop")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|role| role.as_str() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| UnknownRole(s.to_owned()))
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The roles one user holds, sorted and without repeats.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleSet(Vec<Role>);

impl RoleSet {
    pub fn new(roles: impl IntoIterator<Item = Role>) -> Self {
        let mut roles: Vec<Role> = roles.into_iter().collect();
        roles.sort();
        roles.dedup();
        RoleSet(roles)
    }

    pub fn contains(&self, role: Role) -> bool {
        self.0.contains(&role)
    }

    pub fn any_of(&self, roles: &[Role]) -> bool {
        roles.iter().any(|role| self.contains(*role))
    }

    pub fn iter(&self) -> impl Iterator<Item = Role> + '_ {
        self.0.iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for RoleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(Role::as_str).collect();
        f.write_str(&names.join(","))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn roles_parse_from_their_names_case_insensitively() {
        assert_eq!("Approver".parse::<Role>().unwrap(), Role::Approver);
        assert!("root".parse::<Role>().is_err());
    }

    #[test]
    fn every_role_parses_from_its_name_and_the_refusal_lists_them_all() {
        for role in Role::ALL {
            assert_eq!(role.as_str().parse::<Role>().unwrap(), role);
        }
        let refusal = "root".parse::<Role>().unwrap_err().to_string();
        for role in Role::ALL {
            assert!(refusal.contains(role.as_str()), "{refusal} omits {role}");
        }
    }

    #[test]
    fn role_sets_are_sorted_and_deduplicated() {
        let set = RoleSet::new([Role::Manager, Role::Approver, Role::Manager]);
        assert_eq!(set.to_string(), "approver,manager");
        assert!(set.any_of(&[Role::Admin, Role::Manager]));
        assert!(!set.contains(Role::Customer));
    }
}
