//! Which customers a widget site may sign in (admins only). A host site's
//! server signs tokens naming a customer; without this list any registered
//! site could sign in any customer of Countersign. A new site signs in
//! nobody until an admin binds customers to it.

use super::Widget;
use crate::Actor;
use crate::settings::{ChangedBy, record};
use domain::{Role, SettingChange, SettingKind, Timestamp, UserName};
use storage::StorageError;
use storage::widget::SiteCustomer;

#[derive(Debug, thiserror::Error)]
pub enum SiteCustomerError {
    #[error("only admins manage widget sites")]
    NotAllowed,
    #[error("no widget site {0:?}")]
    NoSuchSite(String),
    #[error("no customer named {0:?}")]
    NoSuchCustomer(String),
    #[error("site {site:?} may not sign in {customer:?}")]
    NotBound { site: String, customer: String },
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A customer a site may sign in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteCustomerView {
    pub site_id: String,
    pub customer_id: String,
    pub customer_name: String,
    pub display_name: String,
    pub bound_at: Timestamp,
}

impl Widget {
    /// Lets `site_id` sign in the customer named `customer`; binding one twice
    /// changes nothing.
    ///
    /// # Errors
    /// [`SiteCustomerError`]: not an admin, no such site, no such customer (a
    /// user without the customer role is not one).
    pub async fn bind_customer(
        &self,
        actor: &Actor,
        site_id: &str,
        customer: &str,
    ) -> Result<(), SiteCustomerError> {
        let (db, now) = (&self.db, self.clock.now());
        require_admin(actor)?;
        let tx = db.begin_write().await?;
        if storage::widget::find_site(&*tx, site_id).await?.is_none() {
            return Err(SiteCustomerError::NoSuchSite(site_id.to_owned()));
        }
        let user = find_customer(&*tx, customer).await?;
        let binding = SiteCustomer {
            site_id: site_id.to_owned(),
            customer_id: user.id.clone(),
            bound_by: actor.user_id.clone(),
            bound_at: now,
        };
        if storage::widget::bind_customer(&*tx, &binding).await? {
            let change = SettingChange {
                subject: format!("widget_site:{site_id}"),
                before: Some(format!("may not sign in {}", user.name)),
                after: Some(format!("may sign in {}", user.name)),
            };
            record(
                &*tx,
                &ChangedBy::person(actor),
                SettingKind::WidgetSiteChanged,
                change,
                now,
            )
            .await?;
        }
        tx.commit().await?;
        tracing::info!(site.id = %site_id, customer.id = %user.id, by = %actor.name, "widget site may sign in a customer");
        Ok(())
    }
}

impl Widget {
    /// Stops `site_id` signing in the customer named `customer`: their tokens
    /// from that site are refused, and the sessions it opened for them end at
    /// once.
    ///
    /// # Errors
    /// [`SiteCustomerError`]: not an admin, no such customer, or the site could
    /// not sign them in anyway.
    pub async fn unbind_customer(
        &self,
        actor: &Actor,
        site_id: &str,
        customer: &str,
    ) -> Result<(), SiteCustomerError> {
        let (db, now) = (&self.db, self.clock.now());
        require_admin(actor)?;
        let tx = db.begin_write().await?;
        let user = find_customer(&*tx, customer).await?;
        if !storage::widget::unbind_customer(&*tx, site_id, &user.id).await? {
            return Err(SiteCustomerError::NotBound {
                site: site_id.to_owned(),
                customer: user.name,
            });
        }
        let change = SettingChange {
            subject: format!("widget_site:{site_id}"),
            before: Some(format!("may sign in {}", user.name)),
            after: Some(format!("may not sign in {}", user.name)),
        };
        record(
            &*tx,
            &ChangedBy::person(actor),
            SettingKind::WidgetSiteChanged,
            change,
            now,
        )
        .await?;
        tx.commit().await?;
        tracing::info!(site.id = %site_id, customer.id = %user.id, by = %actor.name, "widget site may no longer sign in a customer");
        Ok(())
    }
}

impl Widget {
    /// Every site's customers, oldest binding first.
    ///
    /// # Errors
    /// Database failures.
    pub async fn list_site_customers(&self) -> Result<Vec<SiteCustomerView>, StorageError> {
        let db = &self.db;
        let bindings = storage::widget::list_site_customers(db.conn()).await?;
        let users = storage::users::list(db.conn()).await?;
        Ok(bindings
            .into_iter()
            .filter_map(|binding| {
                let user = users.iter().find(|u| u.id == binding.customer_id)?;
                Some(SiteCustomerView {
                    site_id: binding.site_id,
                    customer_id: binding.customer_id,
                    customer_name: user.name.clone(),
                    display_name: user.display_name.clone(),
                    bound_at: binding.bound_at,
                })
            })
            .collect())
    }
}

fn require_admin(actor: &Actor) -> Result<(), SiteCustomerError> {
    if actor.roles.contains(Role::Admin) {
        Ok(())
    } else {
        Err(SiteCustomerError::NotAllowed)
    }
}

async fn find_customer(
    db: &impl storage::ConnectionTrait,
    name: &str,
) -> Result<storage::users::UserRecord, SiteCustomerError> {
    let no_such = || SiteCustomerError::NoSuchCustomer(name.trim().to_owned());
    let parsed = UserName::parse(name).map_err(|_| no_such())?;
    storage::users::find_by_name(db, parsed.as_str())
        .await?
        .filter(|user| user.roles.contains(Role::Customer))
        .ok_or_else(no_such)
}
