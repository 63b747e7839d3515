//! The widget frame page: static markup, the site's name and origin, and a
//! Content-Security-Policy whose `frame-ancestors` is the site's origin.

use crate::startup::AppState;
use axum::extract::{Query, State};
use axum::response::{Html, IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct FrameQuery {
    site: Option<String>,
}

/// Scripts, styles and requests only from us; framed only by the site.
fn policy(frame_ancestors: &str) -> String {
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
         img-src 'self' data:; base-uri 'none'; form-action 'none'; \
         frame-ancestors {frame_ancestors}"
    )
}

/// The frame's policy for a site, or `None` when its stored origin is not
/// exactly one strict web origin (so nothing stored can add a directive or
/// another ancestor to the header).
fn site_policy(origin: &str) -> Option<HeaderValue> {
    if !engine::widget::is_strict_origin(origin) {
        return None;
    }
    HeaderValue::from_str(&policy(origin)).ok()
}

pub async fn page(State(state): State<AppState>, Query(query): Query<FrameQuery>) -> Response {
    let site_id = query.site.unwrap_or_default();
    let valid_id = !site_id.is_empty()
        && site_id.len() <= 64
        && site_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid_id {
        return refusal(
            StatusCode::BAD_REQUEST,
            "The widget was loaded without a valid site id (data-site).",
        );
    }
    let site = match state.engine.widget.frame_site(&site_id).await {
        Ok(Some(site)) => site,
        Ok(None) => {
            return refusal(
                StatusCode::NOT_FOUND,
                "This site is not registered for the Countersign chat, or it is disabled.",
            );
        }
        Err(error) => {
            tracing::error!(%error, "widget frame: cannot read the site");
            return refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "The chat is unavailable right now; try again shortly.",
            );
        }
    };
    let Some(csp) = site_policy(&site.origin) else {
        tracing::error!(site.id = %site.id, origin = ?site.origin,
            "widget frame: the site's stored origin is not a strict web origin; refusing to frame");
        return refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            "This site's registered origin is not a valid web origin; an admin must register the site again.",
        );
    };
    let body = FRAME_TEMPLATE
        .replace(
            "{site_id}",
            &html_escape::encode_double_quoted_attribute(&site.id),
        )
        .replace(
            "{host_origin}",
            &html_escape::encode_double_quoted_attribute(&site.origin),
        )
        .replace("{site_name}", &html_escape::encode_text(&site.name));
    (
        [
            (header::CONTENT_SECURITY_POLICY, csp),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        Html(body),
    )
        .into_response()
}

/// An explanation for whoever embeds the widget wrongly; never framed.
fn refusal(status: StatusCode, message: &str) -> Response {
    let body = REFUSAL_TEMPLATE.replace("{message}", &html_escape::encode_text(message));
    let csp = HeaderValue::from_str(&policy("'none'"))
        .unwrap_or_else(|_| HeaderValue::from_static("frame-ancestors 'none'"));
    (status, [(header::CONTENT_SECURITY_POLICY, csp)], Html(body)).into_response()
}

const FRAME_TEMPLATE: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Chat · {site_name}</title>
<link rel="stylesheet" href="/widget/frame.css">
<script src="/widget/frame.js" defer></script>
</head>
<body data-site="{site_id}" data-host-origin="{host_origin}">
<main class="widget">
  <header class="widget-head">
    <div>
      <h1>{site_name}</h1>
      <p class="widget-who" id="who"></p>
    </div>
    <button type="button" id="close" class="widget-close" aria-label="Close the chat">×</button>
  </header>
  <p id="status" class="widget-status" role="status" aria-live="polite">Signing you in…</p>
  <ol id="messages" class="widget-messages" aria-label="Conversation" aria-live="polite"></ol>
  <form id="composer" class="widget-composer" hidden>
    <label for="text" class="visually-hidden">Your message</label>
    <textarea id="text" name="text" rows="2" maxlength="4000" required
      placeholder="Ask about an order, e.g. refund order 4821"></textarea>
    <div class="widget-actions">
      <button type="submit" id="send">Send</button>
      <button type="button" id="add-to-turn" hidden title="The assistant reads this before its next step of the reply being written">Add to this reply</button>
      <button type="button" id="send-now" hidden title="Stop the reply being written and answer this message instead">Send now</button>
      <button type="button" id="stop" hidden>Stop</button>
      <button type="button" id="person" class="widget-person">Talk to a person</button>
    </div>
  </form>
  <noscript><p class="widget-status">The chat needs JavaScript.</p></noscript>
</main>
</body>
</html>
"#;

const REFUSAL_TEMPLATE: &str = r#"<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Chat unavailable · Countersign</title></head>
<body><p>{message}</p></body>
</html>
"#;

#[cfg(test)]
mod tests {
    #[test]
    fn the_frame_policy_names_only_the_sites_origin_as_ancestor() {
        let csp = super::policy("https://shop.example");
        assert!(csp.ends_with("frame-ancestors https://shop.example"));
        assert!(csp.contains("script-src 'self'"));
        assert!(!csp.contains("unsafe-inline"));
    }

    #[test]
    fn an_origin_stored_before_origins_were_strict_cannot_inject_into_the_frame_policy() {
        for stored in [
            "https://a.example;script-src",
            "https://a.example; script-src 'unsafe-inline'",
            "*",
            "https://*.example",
            "https://a.example https://evil.example",
            "https://a.example/path",
            "http://shop.example",
            "https://Shop.example",
            "",
        ] {
            assert!(
                super::site_policy(stored).is_none(),
                "{stored:?} reached the header"
            );
        }
        let csp = super::site_policy("https://shop.example:8443").expect("a strict origin");
        assert!(
            csp.to_str()
                .expect("ascii")
                .ends_with("frame-ancestors https://shop.example:8443")
        );
    }
}
