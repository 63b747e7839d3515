//! Checking a host site's customer token and opening a widget session with it;
//! recognising the session on later requests.

use super::SESSION_PREFIX;
use super::Widget;
use super::keys::{HostTokenClaims, TOKEN_AUDIENCE};
use chrono::Duration;
use domain::{Role, Timestamp};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use rand::RngCore;
use storage::users::UserRecord;
use storage::widget::WidgetSession;
use storage::{StorageError, ids::new_id};

/// The longest a host token may live (`exp - iat`): they are minted per page
/// view, so a stolen one is worth little.
pub const MAX_TOKEN_LIFETIME: Duration = Duration::minutes(15);
/// Tolerated difference between the host's clock and ours.
pub const CLOCK_SKEW: Duration = Duration::seconds(60);
/// How long a widget session lasts once opened.
pub const SESSION_LIFETIME: Duration = Duration::hours(2);
/// Tokens longer than this are refused before parsing.
const MAX_TOKEN_BYTES: usize = 4096;

/// Why a host token opens no session. The messages are shown in the widget,
/// so they say what to fix without revealing which customers exist.
#[derive(Debug, thiserror::Error)]
pub enum WidgetTokenError {
    #[error("the sign-in token is not a valid signed token")]
    Malformed,
    #[error("the sign-in token must be signed with EdDSA (Ed25519)")]
    WrongAlgorithm,
    #[error(
        "the sign-in token's header lists critical extensions (crit) this server does not \
         understand; sign it without crit"
    )]
    CriticalExtension,
    #[error("the sign-in token does not name its signing key (kid)")]
    MissingKeyId,
    #[error("this widget site is not registered or is disabled")]
    UnknownSite,
    #[error("the sign-in token is signed with a key this site does not have (unknown or revoked)")]
    UnknownKey,
    #[error("the sign-in token's signature does not match")]
    BadSignature,
    #[error("the sign-in token lacks or has invalid claims: {0}")]
    InvalidClaims(&'static str),
    #[error("the sign-in token was issued for another site")]
    WrongSite,
    #[error("the sign-in token is not meant for the Countersign widget (aud)")]
    WrongAudience,
    #[error("the sign-in token has expired; reload the page to get a new one")]
    Expired,
    #[error("the sign-in token is issued in the future; check the host's clock")]
    NotYetValid,
    #[error("the sign-in token lives longer than the allowed 15 minutes")]
    LifetimeTooLong,
    #[error("the sign-in token names no customer this site may sign in")]
    UnknownCustomer,
    #[error("the sign-in token was already used; reload the page to get a new one")]
    Replayed,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A widget session just opened; `secret` is shown once.
#[derive(Debug, Clone)]
pub struct OpenedSession {
    pub secret: String,
    pub expires_at: Timestamp,
    pub site_id: String,
    pub customer: UserRecord,
}

/// Who a widget session acts for.
#[derive(Debug, Clone)]
pub struct WidgetIdentity {
    pub session_id: String,
    pub site_id: String,
    pub customer: UserRecord,
}

impl Widget {
    /// Checks `token` (signature with one of the site's active keys, audience,
    /// issuer = the site, lifetime, an enabled customer the site is bound to)
    /// and opens a session.
    /// Each token opens at most one session.
    ///
    /// # Errors
    /// [`WidgetTokenError`] naming what is wrong with the token.
    pub async fn open_session(
        &self,
        site_id: &str,
        token: &str,
    ) -> Result<OpenedSession, WidgetTokenError> {
        let (db, now) = (&self.db, self.clock.now());
        let token = token.trim();
        if token.is_empty() || token.len() > MAX_TOKEN_BYTES {
            return Err(WidgetTokenError::Malformed);
        }
        refuse_critical_extensions(token)?;
        let header = jsonwebtoken::decode_header(token).map_err(|_| WidgetTokenError::Malformed)?;
        if header.alg != Algorithm::EdDSA {
            return Err(WidgetTokenError::WrongAlgorithm);
        }
        let key_id = header.kid.ok_or(WidgetTokenError::MissingKeyId)?;
        let site = storage::widget::find_site(db.conn(), site_id)
            .await?
            .filter(|site| site.disabled_at.is_none())
            .ok_or(WidgetTokenError::UnknownSite)?;
        let key = storage::widget::find_key(db.conn(), &key_id)
            .await?
            .filter(|key| key.site_id == site.id && key.revoked_at.is_none())
            .ok_or(WidgetTokenError::UnknownKey)?;
        let claims = verified_claims(token, &key.public_key, &site.id)?;
        check_times(&claims, now)?;
        if claims.jti.is_empty() || claims.jti.chars().count() > 128 {
            return Err(WidgetTokenError::InvalidClaims(
                "jti must be 1 to 128 characters",
            ));
        }
        let customer = storage::users::find_by_id(db.conn(), &claims.sub)
            .await?
            .filter(|user| !user.disabled && user.roles.contains(Role::Customer))
            .ok_or(WidgetTokenError::UnknownCustomer)?;
        // A site signs in only the customers an admin bound to it; the refusal
        // is the same as for an unknown customer, so a site cannot probe who
        // else has an account.
        if !storage::widget::is_bound(db.conn(), &site.id, &customer.id).await? {
            return Err(WidgetTokenError::UnknownCustomer);
        }

        let secret = new_secret();
        let session = WidgetSession {
            id: new_id("wss"),
            secret_hash: crate::accounts::hash_secret(&secret),
            site_id: site.id.clone(),
            key_id: key.id,
            customer_id: customer.id.clone(),
            token_id: claims.jti,
            created_at: now,
            expires_at: now + SESSION_LIFETIME,
        };
        let tx = db.begin_write().await?;
        match storage::widget::insert_session(&*tx, &session).await {
            Err(error) if error.is_conflict() => return Err(WidgetTokenError::Replayed),
            other => other?,
        }
        // Sessions are short; forget the long-expired ones as new ones arrive.
        storage::widget::delete_expired_sessions(&*tx, now - Duration::days(1)).await?;
        tx.commit().await?;
        Ok(OpenedSession {
            secret,
            expires_at: session.expires_at,
            site_id: site.id,
            customer,
        })
    }
}

impl Widget {
    /// The widget session behind a bearer secret: unexpired, its site enabled,
    /// its key unrevoked, its customer enabled and still bound to the site.
    ///
    /// # Errors
    /// Database failures.
    pub async fn authenticate_session(
        &self,
        secret: &str,
    ) -> Result<Option<WidgetIdentity>, StorageError> {
        let (db, now) = (&self.db, self.clock.now());
        if !secret.starts_with(SESSION_PREFIX) || secret.len() != SESSION_PREFIX.len() + 64 {
            return Ok(None);
        }
        let hash = crate::accounts::hash_secret(secret);
        let Some(session) = storage::widget::find_usable_session(db.conn(), &hash, now).await?
        else {
            return Ok(None);
        };
        if !storage::widget::is_bound(db.conn(), &session.site_id, &session.customer_id).await? {
            return Ok(None);
        }
        let customer = storage::users::find_by_id(db.conn(), &session.customer_id)
            .await?
            .filter(|user| !user.disabled && user.roles.contains(Role::Customer));
        Ok(customer.map(|customer| WidgetIdentity {
            session_id: session.id,
            site_id: session.site_id,
            customer,
        }))
    }
}

/// RFC 7515 §4.1.11: a token whose protected header has `crit` must be
/// refused unless every extension it lists is understood, and we understand
/// none. `jsonwebtoken` does not read `crit`, so the header is read here.
fn refuse_critical_extensions(token: &str) -> Result<(), WidgetTokenError> {
    use base64::Engine as _;
    let segment = token.split('.').next().unwrap_or_default();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(segment)
        .map_err(|_| WidgetTokenError::Malformed)?;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&bytes).map_err(|_| WidgetTokenError::Malformed)?;
    if header.contains_key("crit") {
        return Err(WidgetTokenError::CriticalExtension);
    }
    Ok(())
}

fn verified_claims(
    token: &str,
    public_key: &str,
    site_id: &str,
) -> Result<HostTokenClaims, WidgetTokenError> {
    let key = DecodingKey::from_ed_components(public_key).map_err(|error| {
        WidgetTokenError::Storage(StorageError::Corrupt(format!(
            "stored widget public key: {error}"
        )))
    })?;
    let mut validation = Validation::new(Algorithm::EdDSA);
    validation.set_audience(&[TOKEN_AUDIENCE]);
    validation.set_issuer(&[site_id]);
    validation.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
    // Times are checked against the caller's clock in `check_times`.
    validation.validate_exp = false;
    jsonwebtoken::decode::<HostTokenClaims>(token, &key, &validation)
        .map(|data| data.claims)
        .map_err(|error| match error.kind() {
            ErrorKind::InvalidSignature => WidgetTokenError::BadSignature,
            ErrorKind::InvalidAudience => WidgetTokenError::WrongAudience,
            ErrorKind::InvalidIssuer => WidgetTokenError::WrongSite,
            ErrorKind::InvalidAlgorithm => WidgetTokenError::WrongAlgorithm,
            ErrorKind::MissingRequiredClaim(_) | ErrorKind::Json(_) => {
                WidgetTokenError::InvalidClaims("iss, sub, aud, iat, exp and jti are required")
            }
            _ => WidgetTokenError::Malformed,
        })
}

fn check_times(claims: &HostTokenClaims, now: Timestamp) -> Result<(), WidgetTokenError> {
    let now = now.timestamp();
    if claims.exp <= claims.iat {
        return Err(WidgetTokenError::InvalidClaims("exp must be after iat"));
    }
    if claims.exp + CLOCK_SKEW.num_seconds() < now {
        return Err(WidgetTokenError::Expired);
    }
    if claims.iat - CLOCK_SKEW.num_seconds() > now {
        return Err(WidgetTokenError::NotYetValid);
    }
    if claims.exp - claims.iat > MAX_TOKEN_LIFETIME.num_seconds() {
        return Err(WidgetTokenError::LifetimeTooLong);
    }
    Ok(())
}

fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{SESSION_PREFIX}{}", hex::encode(bytes))
}
