//! First-run demo data for the embedded default, and the login banner.

use crate::config::{PaymentProviderKind, Settings};
use secrecy::ExposeSecret;
use std::path::PathBuf;
use storage::Database;

/// Where a generated demo password is kept so later starts can print it again.
fn password_file(settings: &Settings) -> Option<PathBuf> {
    let path = settings
        .database_url
        .strip_prefix("sqlite:")?
        .trim_start_matches("//")
        .split('?')
        .next()?
        .to_owned();
    let parent = std::path::Path::new(&path).parent()?.to_path_buf();
    Some(parent.join("demo-password.txt"))
}

fn random_password() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::rngs::OsRng;
    (0..16)
        .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
        .collect()
}

/// The demo's returns desk: the group that keeps the returned parcels.
pub const RETURNS_GROUP: &str = "returns";

/// Seeds demo data when the database is empty and seeding is on, then prints
/// the URL and the demo logins.
///
/// # Errors
/// Seeding failed.
pub async fn seed_and_announce(settings: &Settings, db: &Database) -> anyhow::Result<()> {
    if !settings.should_seed_demo() {
        return Ok(());
    }
    let configured = settings
        .demo_password
        .as_ref()
        .map(|p| p.expose_secret().to_owned());
    let file = password_file(settings);
    let fresh = storage::users::count(db.conn()).await? == 0;
    let password = if fresh {
        let password = configured.clone().unwrap_or_else(random_password);
        engine::demo::seed_demo(db, &password, reference_style(settings), engine::now()).await?;
        if settings.gateway_group.as_deref() == Some(RETURNS_GROUP) {
            engine::demo::seed_returned_parcels(db, engine::now()).await?;
        }
        if configured.is_none()
            && let Some(file) = &file
        {
            write_private(file, &password)?;
        }
        Some(password)
    } else {
        configured.or_else(|| file.and_then(|f| std::fs::read_to_string(f).ok()))
    };
    print_banner(settings, password.as_deref());
    Ok(())
}

/// Demo orders are paid with references the configured provider can
/// address: Stripe refuses the sandbox's `pay_…`.
fn reference_style(settings: &Settings) -> engine::demo::ReferenceStyle {
    match settings.payment_provider {
        PaymentProviderKind::Stripe => engine::demo::ReferenceStyle::Stripe,
        PaymentProviderKind::Sandbox => engine::demo::ReferenceStyle::Sandbox,
    }
}

fn write_private(path: &std::path::Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, contents)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

fn print_banner(settings: &Settings, password: Option<&str>) {
    let users: Vec<&str> = engine::demo::DEMO_USERS
        .iter()
        .map(|(name, _, _)| *name)
        .collect();
    println!();
    println!("  Countersign is running at {}", settings.display_url());
    println!("  Demo logins: {}", users.join(", "));
    match password {
        Some(password) => println!("  Password for every demo login: {password}"),
        None => println!(
            "  Demo users exist; use the password printed on first start or set COUNTERSIGN_DEMO_PASSWORD before seeding."
        ),
    }
    println!();
}
