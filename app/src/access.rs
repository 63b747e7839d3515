//! Who may open which page. The server enforces this table on every page
//! request; the navigation only uses it to hide links.

use domain::{Role, RoleSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAccess {
    Public,
    SignedIn,
    AnyOf(&'static [Role]),
}

pub const QUEUE_ROLES: &[Role] = &[Role::Approver];
pub const AUDIT_ROLES: &[Role] = &[Role::Manager];
pub const ADMIN_ROLES: &[Role] = &[Role::Admin];
/// Who may watch and act on background work (`/ops`).
pub const OPS_ROLES: &[Role] = &[Role::Manager, Role::Admin];
/// Who may open the staff inbox page: the staff roles an admin can give
/// it. The inbox itself answers only the roles the admin chose.
pub const INBOX_ROLES: &[Role] = &[Role::Approver, Role::Manager, Role::Admin];

/// Whether pages should speak to this person as a customer: they hold the
/// customer role and no staff role (staff who also shop see staff pages).
pub fn is_customer_only(roles: &RoleSet) -> bool {
    roles.contains(Role::Customer) && !roles.any_of(INBOX_ROLES)
}

/// The access rule for a page path.
pub fn page_access(path: &str) -> PageAccess {
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    match first {
        // A visitor may start chatting before signing in; the agent asks
        // them to sign in when it needs their orders.
        "login" | "chat" => PageAccess::Public,
        "" | "proposals" | "refunds" => PageAccess::SignedIn,
        "queue" => PageAccess::AnyOf(QUEUE_ROLES),
        "audit" => PageAccess::AnyOf(AUDIT_ROLES),
        "admin" => PageAccess::AnyOf(ADMIN_ROLES),
        "ops" => PageAccess::AnyOf(OPS_ROLES),
        "inbox" => PageAccess::AnyOf(INBOX_ROLES),
        _ => PageAccess::Public,
    }
}

impl PageAccess {
    /// Whether a user holding `roles` (None when signed out) may open the page.
    pub fn allows(&self, roles: Option<&RoleSet>) -> bool {
        match (self, roles) {
            (PageAccess::Public, _) => true,
            (_, None) => false,
            (PageAccess::SignedIn, Some(_)) => true,
            (PageAccess::AnyOf(required), Some(roles)) => roles.any_of(required),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approver_pages_refuse_customers_and_signed_out_visitors() {
        let customer = RoleSet::new([Role::Customer]);
        let approver = RoleSet::new([Role::Approver]);
        let queue = page_access("/queue");
        assert!(!queue.allows(None));
        assert!(!queue.allows(Some(&customer)));
        assert!(queue.allows(Some(&approver)));
    }

    #[test]
    fn a_shop_service_account_opens_no_staff_page() {
        let shop = RoleSet::new([Role::Shop]);
        for path in ["/queue", "/audit", "/admin", "/inbox", "/ops"] {
            assert!(!page_access(path).allows(Some(&shop)), "{path}");
        }
    }

    #[test]
    fn background_work_is_shown_to_managers_and_admins_only() {
        let ops = page_access("/ops");
        assert!(ops.allows(Some(&RoleSet::new([Role::Manager]))));
        assert!(ops.allows(Some(&RoleSet::new([Role::Admin]))));
        assert!(!ops.allows(Some(&RoleSet::new([Role::Approver]))));
        assert!(!ops.allows(None));
    }

    #[test]
    fn the_login_page_is_open_to_everyone() {
        assert!(page_access("/login").allows(None));
    }

    #[test]
    fn the_landing_page_needs_a_signed_in_user() {
        assert!(!page_access("/").allows(None));
        assert!(page_access("/").allows(Some(&RoleSet::new([Role::Agent]))));
    }
}
