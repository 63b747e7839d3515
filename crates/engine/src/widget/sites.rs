//! Registering host sites and managing their keys (admins only).

use super::Widget;
use super::keys::{NewSigningKey, generate};
use crate::Actor;
use crate::settings::{ChangedBy, record};
use domain::{Role, SettingChange, SettingKind, Timestamp};
use storage::widget::{WidgetKey, WidgetSite};
use storage::{StorageError, ids::new_id};

#[derive(Debug, thiserror::Error)]
pub enum SiteAdminError {
    #[error("only admins manage widget sites")]
    NotAllowed,
    #[error("site name must be 1 to 200 characters")]
    InvalidName,
    #[error("{0}")]
    InvalidOrigin(String),
    #[error("the origin {0} is already registered")]
    OriginTaken(String),
    #[error("no widget site {0:?}")]
    NoSuchSite(String),
    #[error("site {site:?} has no active key {key:?}")]
    NoSuchKey { site: String, key: String },
    #[error("could not generate a signing key")]
    KeyGeneration,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyView {
    pub id: String,
    pub public_key: String,
    pub created_at: Timestamp,
    pub revoked_at: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteView {
    pub id: String,
    pub name: String,
    pub origin: String,
    pub created_at: Timestamp,
    pub disabled: bool,
    pub keys: Vec<KeyView>,
}

/// The origin a browser sends for pages of `input`: `scheme://host[:port]`,
/// lower-case, default port dropped. Only a strict web origin is accepted:
/// `https` (plain `http` only for a loopback host such as `localhost` or
/// `127.0.0.1`), a host of letters, digits, hyphens and dots (or an IP
/// address), an optional port, at most a trailing `/`. Wildcards, `;`,
/// whitespace, percent-escapes, paths, queries, fragments and credentials are
/// refused rather than silently dropped, so what is stored can only ever be
/// one origin in the frame's `frame-ancestors`.
///
/// # Errors
/// [`SiteAdminError::InvalidOrigin`] saying what is wrong.
pub fn normalize_origin(input: &str) -> Result<String, SiteAdminError> {
    let invalid = |why: &str| SiteAdminError::InvalidOrigin(format!("origin {input:?}: {why}"));
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(invalid("an origin is required, e.g. https://shop.example"));
    }
    // The URL parser silently drops tabs and newlines inside its input.
    if let Some(c) = trimmed
        .chars()
        .find(|c| c.is_whitespace() || c.is_control())
    {
        return Err(invalid(&format!(
            "whitespace or control characters ({c:?}) are not allowed"
        )));
    }
    let url = url::Url::parse(trimmed).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be https (or http for localhost)"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid("credentials are not part of an origin"));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(invalid(
            "give only scheme, host and port, e.g. https://shop.example",
        ));
    }
    if let Some(c) = trimmed.chars().find(|c| !is_origin_char(*c)) {
        return Err(invalid(&format!(
            "{c:?} is not allowed; give only scheme, host and port, e.g. https://shop.example"
        )));
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(domain)) => {
            let labels_ok = domain.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
            if !labels_ok || domain.len() > 253 {
                return Err(invalid(
                    "the host must be a domain name: letters, digits and hyphens separated by dots",
                ));
            }
            domain == "localhost"
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => return Err(invalid("a host is required")),
    };
    if url.scheme() == "http" && !loopback {
        return Err(invalid(
            "the scheme must be https; plain http is allowed only for localhost or 127.0.0.1",
        ));
    }
    let origin = url.origin();
    let serialized = origin.ascii_serialization();
    // What is stored must parse back to exactly this origin.
    let round_trips = origin.is_tuple()
        && url::Url::parse(&serialized).is_ok_and(|again| {
            again.as_str() == url.as_str() && again.origin().ascii_serialization() == serialized
        });
    if !round_trips {
        return Err(invalid("not a single web origin"));
    }
    Ok(serialized)
}

/// Characters a written origin may contain (IPv6 brackets, IDN letters).
fn is_origin_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '-' | ':' | '/' | '[' | ']')
}

/// Whether `origin` is exactly what [`normalize_origin`] stores. Whoever
/// writes an origin into a header checks this first, so an origin stored
/// before the rules were strict cannot add anything to that header.
#[must_use]
pub fn is_strict_origin(origin: &str) -> bool {
    normalize_origin(origin).is_ok_and(|normalized| normalized == origin)
}

fn require_admin(actor: &Actor) -> Result<(), SiteAdminError> {
    if actor.roles.contains(Role::Admin) {
        Ok(())
    } else {
        Err(SiteAdminError::NotAllowed)
    }
}

impl Widget {
    /// Registers a site and makes its first key.
    ///
    /// # Errors
    /// [`SiteAdminError`] for a bad name or origin, or an origin already taken.
    pub async fn register_site(
        &self,
        actor: &Actor,
        name: &str,
        origin: &str,
    ) -> Result<NewSigningKey, SiteAdminError> {
        let (db, now) = (&self.db, self.clock.now());
        require_admin(actor)?;
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 200 {
            return Err(SiteAdminError::InvalidName);
        }
        let origin = normalize_origin(origin)?;
        let site = WidgetSite {
            id: new_id("wst"),
            name: name.to_owned(),
            origin: origin.clone(),
            created_by: actor.user_id.clone(),
            created_at: now,
            disabled_at: None,
        };
        let (key, stored_key) = make_key(&site.id, actor, now)?;
        let tx = db.begin_write().await?;
        match storage::widget::insert_site(&*tx, &site).await {
            Err(error) if error.is_conflict() => return Err(SiteAdminError::OriginTaken(origin)),
            other => other?,
        }
        storage::widget::insert_key(&*tx, &stored_key).await?;
        let change = SettingChange {
            subject: format!("widget_site:{}", site.id),
            before: None,
            after: Some(format!("{} at {origin}, key {}", site.name, key.key_id)),
        };
        record(
            &*tx,
            &ChangedBy::person(actor),
            SettingKind::WidgetSiteAdded,
            change,
            now,
        )
        .await?;
        tx.commit().await?;
        tracing::info!(site.id = %site.id, %origin, by = %actor.name, "widget site registered");
        Ok(key)
    }
}

impl Widget {
    /// Adds a key to a site (rotation: add, deploy, then revoke the old one).
    ///
    /// # Errors
    /// [`SiteAdminError::NoSuchSite`].
    pub async fn add_key(
        &self,
        actor: &Actor,
        site_id: &str,
    ) -> Result<NewSigningKey, SiteAdminError> {
        let (db, now) = (&self.db, self.clock.now());
        require_admin(actor)?;
        let tx = db.begin_write().await?;
        if storage::widget::find_site(&*tx, site_id).await?.is_none() {
            return Err(SiteAdminError::NoSuchSite(site_id.to_owned()));
        }
        let (key, stored_key) = make_key(site_id, actor, now)?;
        storage::widget::insert_key(&*tx, &stored_key).await?;
        let change = SettingChange {
            subject: format!("widget_site:{site_id}"),
            before: None,
            after: Some(format!("key {}", key.key_id)),
        };
        record(
            &*tx,
            &ChangedBy::person(actor),
            SettingKind::WidgetKeyAdded,
            change,
            now,
        )
        .await?;
        tx.commit().await?;
        tracing::info!(site.id = %site_id, key.id = %key.key_id, by = %actor.name, "widget key added");
        Ok(key)
    }
}

impl Widget {
    /// Revokes a key: its tokens are refused and the sessions opened with it end.
    ///
    /// # Errors
    /// [`SiteAdminError::NoSuchKey`] when the site has no such active key.
    pub async fn revoke_key(
        &self,
        actor: &Actor,
        site_id: &str,
        key_id: &str,
    ) -> Result<(), SiteAdminError> {
        let (db, now) = (&self.db, self.clock.now());
        require_admin(actor)?;
        let tx = db.begin_write().await?;
        if !storage::widget::revoke_key(&*tx, site_id, key_id, now).await? {
            return Err(SiteAdminError::NoSuchKey {
                site: site_id.to_owned(),
                key: key_id.to_owned(),
            });
        }
        let change = SettingChange {
            subject: format!("widget_site:{site_id}"),
            before: Some(format!("key {key_id} active")),
            after: Some(format!("key {key_id} revoked")),
        };
        record(
            &*tx,
            &ChangedBy::person(actor),
            SettingKind::WidgetKeyRevoked,
            change,
            now,
        )
        .await?;
        tx.commit().await?;
        tracing::info!(site.id = %site_id, key.id = %key_id, by = %actor.name, "widget key revoked");
        Ok(())
    }
}

impl Widget {
    /// Disables a site (its frame, tokens and sessions are refused) or enables it again.
    ///
    /// # Errors
    /// [`SiteAdminError::NoSuchSite`].
    pub async fn set_site_enabled(
        &self,
        actor: &Actor,
        site_id: &str,
        enabled: bool,
    ) -> Result<(), SiteAdminError> {
        let (db, now) = (&self.db, self.clock.now());
        require_admin(actor)?;
        let tx = db.begin_write().await?;
        let Some(site) = storage::widget::find_site(&*tx, site_id).await? else {
            return Err(SiteAdminError::NoSuchSite(site_id.to_owned()));
        };
        let disabled_at = (!enabled).then_some(now);
        if !storage::widget::set_site_disabled(&*tx, site_id, disabled_at).await? {
            return Err(SiteAdminError::NoSuchSite(site_id.to_owned()));
        }
        let state = |enabled: bool| if enabled { "enabled" } else { "disabled" }.to_owned();
        let change = SettingChange {
            subject: format!("widget_site:{site_id}"),
            before: Some(state(site.disabled_at.is_none())),
            after: Some(state(enabled)),
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
        tracing::info!(site.id = %site_id, enabled, by = %actor.name, "widget site changed");
        Ok(())
    }
}

impl Widget {
    /// Every site with its keys.
    ///
    /// # Errors
    /// Database failures.
    pub async fn list_sites(&self) -> Result<Vec<SiteView>, StorageError> {
        let db = &self.db;
        let sites = storage::widget::list_sites(db.conn()).await?;
        let keys = storage::widget::list_keys(db.conn()).await?;
        Ok(sites
            .into_iter()
            .map(|site| SiteView {
                keys: keys
                    .iter()
                    .filter(|k| k.site_id == site.id)
                    .map(|k| KeyView {
                        id: k.id.clone(),
                        public_key: k.public_key.clone(),
                        created_at: k.created_at,
                        revoked_at: k.revoked_at,
                    })
                    .collect(),
                id: site.id,
                name: site.name,
                origin: site.origin,
                created_at: site.created_at,
                disabled: site.disabled_at.is_some(),
            })
            .collect())
    }
}

impl Widget {
    /// The enabled site a widget frame is requested for, if any.
    ///
    /// # Errors
    /// Database failures.
    pub async fn frame_site(&self, site_id: &str) -> Result<Option<WidgetSite>, StorageError> {
        let db = &self.db;
        Ok(storage::widget::find_site(db.conn(), site_id)
            .await?
            .filter(|site| site.disabled_at.is_none()))
    }
}

fn make_key(
    site_id: &str,
    actor: &Actor,
    now: Timestamp,
) -> Result<(NewSigningKey, WidgetKey), SiteAdminError> {
    let (private_key_pem, public_key) = generate().map_err(|_| SiteAdminError::KeyGeneration)?;
    let key_id = new_id("wsk");
    let stored = WidgetKey {
        id: key_id.clone(),
        site_id: site_id.to_owned(),
        public_key: public_key.clone(),
        created_by: actor.user_id.clone(),
        created_at: now,
        revoked_at: None,
    };
    Ok((
        NewSigningKey {
            site_id: site_id.to_owned(),
            key_id,
            private_key_pem,
            public_key,
        },
        stored,
    ))
}

#[cfg(test)]
mod tests {
    use super::normalize_origin;

    #[test]
    fn origins_are_normalized_to_what_browsers_send() {
        assert_eq!(
            normalize_origin("https://Shop.Example:443").expect("valid"),
            "https://shop.example"
        );
        assert_eq!(
            normalize_origin("http://127.0.0.1:3211/").expect("valid"),
            "http://127.0.0.1:3211"
        );
    }

    #[test]
    fn origins_with_paths_credentials_or_other_schemes_are_refused() {
        for bad in [
            "https://shop.example/help",
            "https://shop.example/?q=1",
            "https://user:pw@shop.example",
            "javascript:alert(1)",
            "ftp://shop.example",
            "shop.example",
            "",
        ] {
            assert!(normalize_origin(bad).is_err(), "{bad} should be refused");
        }
    }
}
