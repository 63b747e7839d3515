//! A carrier's tracking page read in a real, headless Chromium driven over
//! the DevTools protocol (`chromiumoxide`: async on tokio, typed protocol,
//! kept up with Chromium's releases; `headless_chrome` blocks a thread per
//! call, which a Stop could not interrupt).
//!
//! Each read launches its own browser with a fresh profile and ends it
//! afterwards: no state leaks from one customer's check into the next,
//! and a browser that hangs is killed with the read. The whole read is one
//! future, the protocol's message pump included, so dropping it (a Stop)
//! kills the browser process and leaves nothing running.
//!
//! The page is evidence, not just data: what it said is kept with a
//! screenshot of it, the URL it came from and the SHA-256 of the picture.

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::page::ScreenshotParams;
use futures::StreamExt;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where Debian installs Chromium (`apt-get install chromium`).
pub const DEBIAN_CHROMIUM: &str = "/usr/bin/chromium";

/// A headless Chromium at a known path.
#[derive(Debug, Clone)]
pub struct Chromium {
    executable: PathBuf,
    /// The longest a whole read may take, launch included.
    timeout: Duration,
}

/// What a tracking page said, as the browser rendered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackingPage {
    /// The page's address after any redirect.
    pub url: String,
    /// `delivered`, `in_transit`, `out_for_delivery`, `exception` or
    /// `unknown` (the page named none of them).
    pub status: String,
    /// The delivery date the page shows (`YYYY-MM-DD`), when delivered.
    pub delivered_on: Option<String>,
    /// The page's visible text, as the customer would read it.
    pub text: String,
    /// A PNG of the whole page at the moment it was read.
    pub screenshot: Vec<u8>,
    /// Lowercase hex SHA-256 of `screenshot`.
    pub screenshot_sha256: String,
}

/// Why a page could not be read. Never a guess about the parcel: the
/// caller reports the check as unknown, with this reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrowserError {
    #[error("no browser is installed at {0} (install Debian's chromium)")]
    NotInstalled(String),
    #[error("the browser did not start: {0}")]
    Launch(String),
    #[error("the page could not be read: {0}")]
    Page(String),
    #[error("the page did not finish within {0:?}")]
    Timeout(Duration),
}

const STATUSES: [&str; 4] = ["delivered", "in_transit", "out_for_delivery", "exception"];

impl Chromium {
    pub fn new(executable: impl Into<PathBuf>, timeout: Duration) -> Self {
        Chromium {
            executable: executable.into(),
            timeout,
        }
    }

    /// Debian's Chromium, reads bounded by `timeout`.
    pub fn debian(timeout: Duration) -> Self {
        Chromium::new(DEBIAN_CHROMIUM, timeout)
    }

    /// Whether the executable is there at all.
    pub fn is_installed(&self) -> bool {
        self.executable.is_file()
    }

    /// Opens `url` and reads the tracking status it shows (the element
    /// carrying `data-tracking-status`, and `data-delivered-on` when
    /// delivered), its text and a screenshot. Cancel-safe: dropping the
    /// future kills the browser.
    ///
    /// # Errors
    /// See [`BrowserError`].
    pub async fn read_tracking_page(&self, url: &str) -> Result<TrackingPage, BrowserError> {
        if !self.is_installed() {
            return Err(BrowserError::NotInstalled(
                self.executable.display().to_string(),
            ));
        }
        match tokio::time::timeout(self.timeout, self.read(url)).await {
            Ok(read) => read,
            Err(_) => Err(BrowserError::Timeout(self.timeout)),
        }
    }

    async fn read(&self, url: &str) -> Result<TrackingPage, BrowserError> {
        // A profile of its own, removed when the read ends: concurrent
        // browsers (tests, replicas on one machine) never share one.
        let profile = Profile(Some(
            tempfile::Builder::new()
                .prefix("countersign-browser-")
                .tempdir()
                .map_err(|e| BrowserError::Launch(format!("no profile folder: {e}")))?,
        ));
        let config = BrowserConfig::builder()
            .chrome_executable(&self.executable)
            .user_data_dir(profile.path())
            // Root in a container has no user namespace for the sandbox;
            // the pages read are the carrier's, never the customer's input.
            .no_sandbox()
            .args([
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .request_timeout(self.timeout)
            .launch_timeout(self.timeout)
            .build()
            .map_err(BrowserError::Launch)?;
        let (mut browser, mut handler) = Browser::launch(config)
            .await
            .map_err(|e| BrowserError::Launch(e.to_string()))?;
        // The protocol's messages are pumped by this same future, so
        // nothing outlives a cancelled read. The pump ends only once the
        // browser answered `close`; a browser that dies leaves it waiting,
        // and the read's time limit ends the read.
        let pump = async move {
            while let Some(event) = handler.next().await {
                // A message this protocol version does not know is
                // skipped, not fatal: Chromium adds events faster than
                // crates follow.
                if let Err(error) = event {
                    tracing::debug!(%error, "browser protocol message skipped");
                }
            }
            std::future::pending::<()>().await;
        };
        let read = async {
            let page = read_page(&browser, url).await;
            let _closed = browser.close().await;
            let _ended = browser.wait().await;
            page
        };
        tokio::select! {
            page = read => page,
            () = pump => Err(BrowserError::Page("the browser's connection ended".to_owned())),
        }
    }
}

/// A browser's profile folder, removed when the read ends. Removing a
/// Chromium profile takes tens of milliseconds, so it happens on a thread
/// of its own: a Stop does not wait for it.
struct Profile(Option<tempfile::TempDir>);

impl Profile {
    fn path(&self) -> &Path {
        self.0
            .as_ref()
            .map_or(Path::new(""), tempfile::TempDir::path)
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        let Some(folder) = self.0.take() else {
            return;
        };
        let removing = std::thread::Builder::new()
            .name("browser-profile-removal".to_owned())
            .spawn(move || drop(folder));
        if let Err(error) = removing {
            tracing::warn!(%error, "the browser profile folder is removed in place");
        }
    }
}

async fn read_page(browser: &Browser, url: &str) -> Result<TrackingPage, BrowserError> {
    let page_error = |e: chromiumoxide::error::CdpError| BrowserError::Page(e.to_string());
    let page = browser.new_page("about:blank").await.map_err(page_error)?;
    page.goto(url).await.map_err(page_error)?;
    let shown = page
        .find_element("[data-tracking-status]")
        .await
        .map_err(|_| BrowserError::Page(format!("{url} shows no tracking status")))?;
    let stated = shown
        .attribute("data-tracking-status")
        .await
        .map_err(page_error)?
        .unwrap_or_default();
    let status = if STATUSES.contains(&stated.as_str()) {
        stated
    } else {
        "unknown".to_owned()
    };
    let delivered_on = shown
        .attribute("data-delivered-on")
        .await
        .map_err(page_error)?
        .filter(|date| chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_ok());
    let text = page
        .find_element("body")
        .await
        .map_err(page_error)?
        .inner_text()
        .await
        .map_err(page_error)?
        .unwrap_or_default();
    let screenshot = page
        .screenshot(
            ScreenshotParams::builder()
                .format(CaptureScreenshotFormat::Png)
                .full_page(true)
                .build(),
        )
        .await
        .map_err(page_error)?;
    let url = page
        .url()
        .await
        .map_err(page_error)?
        .unwrap_or_else(|| url.to_owned());
    let screenshot_sha256 = hex::encode(Sha256::digest(&screenshot));
    Ok(TrackingPage {
        url,
        // A date beside any other status is not a delivery.
        delivered_on: delivered_on.filter(|_| status == "delivered"),
        status,
        text: text.trim().to_owned(),
        screenshot,
        screenshot_sha256,
    })
}
