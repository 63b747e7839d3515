//! The policy section of `/admin`: the documents in force with their
//! versions, and publishing a new version of the chosen policy (or a new
//! policy) after reviewing its changes line by line.

use crate::admin::PolicyInfo;
use crate::admin_policy::{
    AdminPublishPolicy, AdminReviewPolicy, PolicyReview, admin_policy_in_force,
};
use crate::csrf::CsrfField;
use crate::format::{short_digest, utc};
use crate::pages::admin::outcome;
use leptos::form::ActionForm;
use leptos::prelude::*;

/// What the admin is writing: the policy chosen (blank for a new one), its
/// slug and title, the text, and its review. A chosen file fills the text
/// (and, for a new policy, the slug from the file name and the title from
/// its first heading, each only if still empty); choosing a policy with the
/// editor empty starts it from the version in force. Owned by the page, so a
/// refresh of the overview after another change does not empty it.
#[derive(Clone, Copy)]
pub struct PolicyDraft {
    chosen: RwSignal<String>,
    slug: RwSignal<String>,
    title: RwSignal<String>,
    body: RwSignal<String>,
    review: ServerAction<AdminReviewPolicy>,
}

impl PolicyDraft {
    pub fn new() -> PolicyDraft {
        PolicyDraft {
            chosen: RwSignal::default(),
            slug: RwSignal::default(),
            title: RwSignal::default(),
            body: RwSignal::default(),
            review: ServerAction::new(),
        }
    }
}

impl PolicyDraft {
    /// After publishing: a fresh start.
    pub fn published(self) {
        self.review.value().set(None);
        self.chosen.set(String::new());
        self.slug.set(String::new());
        self.title.set(String::new());
        self.body.set(String::new());
    }
}

impl Default for PolicyDraft {
    fn default() -> Self {
        Self::new()
    }
}

#[component]
pub fn PolicyEditor(
    policies: Vec<PolicyInfo>,
    draft: PolicyDraft,
    publish: ServerAction<AdminPublishPolicy>,
) -> impl IntoView {
    let review = draft.review;
    // Any edit makes the review stale: what is published is what was seen.
    let edited = move || review.value().set(None);
    let titles: Vec<(String, String)> = policies
        .iter()
        .map(|p| (p.slug.clone(), p.title.clone()))
        .collect();
    let choose = move |slug: String| {
        draft.chosen.set(slug.clone());
        let title = titles
            .iter()
            .find(|(s, _)| *s == slug)
            .map(|(_, t)| t.clone())
            .unwrap_or_default();
        draft.slug.set(slug.clone());
        draft.title.set(title);
        edited();
        // An empty editor starts from the version in force, so a change is
        // an edit of it; text the admin wrote or loaded is never replaced.
        if draft.body.get_untracked().is_empty() && !slug.is_empty() {
            leptos::task::spawn_local(async move {
                if let Ok(text) = admin_policy_in_force(slug.clone()).await
                    && draft.body.get_untracked().is_empty()
                    && draft.chosen.get_untracked() == slug
                {
                    draft.body.set(text);
                }
            });
        }
    };
    let is_new = move || draft.chosen.get().is_empty();
    view! {
        <section class="card wide" data-testid="policy-editor">
            <h2>"Policy documents"</h2>
            <ul data-testid="policies">
                {policies.iter().map(|p| view! {
                    <li data-policy=p.slug.clone()>
                        <strong>{p.title.clone()}</strong>
                        <span class="muted small">{format!(" ({}, version {}, since {})", p.slug, short_digest(&p.version), utc(p.created_at))}</span>
                        {(!p.earlier.is_empty()).then(|| view! {
                            <span class="muted small" data-testid="earlier-versions">
                                {format!(" · earlier: {}", p.earlier.iter().map(|(v, at)| format!("{} (from {})", short_digest(v), utc(*at))).collect::<Vec<_>>().join(", "))}
                            </span>
                        })}
                    </li>
                }).collect_view()}
            </ul>
            <h3>"Publish a version"</h3>
            <ActionForm action=review>
                <CsrfField/>
                <label for="policy-choice">"Policy"</label>
                <select id="policy-choice" on:change=move |ev| choose(event_target_value(&ev))>
                    <option value="" selected=is_new>"A new policy"</option>
                    {policies.iter().map(|p| {
                        let slug = p.slug.clone();
                        let chosen = slug.clone();
                        view! {
                            <option value=slug selected=move || draft.chosen.get() == chosen>
                                {format!("{} ({})", p.title, p.slug)}
                            </option>
                        }
                    }).collect_view()}
                </select>
                <input type="hidden" name="slug" prop:value=draft.slug/>
                <Show when=is_new>
                    <label for="policy-slug">"Slug of the new policy"</label>
                    <input id="policy-slug" placeholder="gift-cards" required maxlength="128"
                        prop:value=draft.slug on:input=move |ev| { draft.slug.set(event_target_value(&ev)); edited(); }/>
                </Show>
                <label for="policy-title">"Title"</label>
                <input id="policy-title" name="title" required maxlength="300"
                    prop:value=draft.title on:input=move |ev| { draft.title.set(event_target_value(&ev)); edited(); }/>
                <label for="policy-file">"Markdown file (fills the text below)"</label>
                <input id="policy-file" type="file" accept=".md,.markdown,.txt,text/markdown,text/plain"
                    on:change=move |ev| { draft.read_file(ev); edited(); }/>
                <label for="policy-body">"Markdown (## headings become citable sections)"</label>
                <textarea id="policy-body" name="body" required rows="10"
                    prop:value=draft.body on:input=move |ev| { draft.body.set(event_target_value(&ev)); edited(); }></textarea>
                <button type="submit" class="secondary">"Review changes"</button>
            </ActionForm>
            {move || review.value().get().map(|result| match result {
                Ok(changes) => view! { <ReviewPanel changes publish/> }.into_any(),
                Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
            })}
            {outcome(publish)}
        </section>
    }
}

/// The changes publishing would make, and the button that publishes exactly
/// the reviewed text.
#[component]
fn ReviewPanel(changes: PolicyReview, publish: ServerAction<AdminPublishPolicy>) -> impl IntoView {
    let against = match (&changes.current_version, &changes.current_title) {
        (Some(version), Some(title)) => format!(
            "Against {title}, version {} in force:",
            short_digest(version)
        ),
        _ => "A new policy:".to_owned(),
    };
    let summary = format!(
        "{against} {} line(s) added, {} removed.",
        changes.added_lines, changes.removed_lines
    );
    let publish_label = if changes.current_version.is_some() {
        "Publish as new version"
    } else {
        "Publish new policy"
    };
    if changes.unchanged {
        return view! {
            <p class="notice" role="status" data-testid="policy-review">"Nothing changes: this is the text and title in force."</p>
        }.into_any();
    }
    view! {
        <div data-testid="policy-review">
            <p role="status">{summary}</p>
            {changes.hunks.iter().map(|hunk| view! {
                <pre class="diff" tabindex="0" aria-label=format!("Changes from line {}", hunk.new_start)>
                    {hunk.lines.iter().map(|line| {
                        let class = match line.change { '+' => "added", '-' => "removed", _ => "kept" };
                        view! { <span class=class>{format!("{} {}\n", line.change, line.text)}</span> }
                    }).collect_view()}
                </pre>
            }).collect_view()}
            <p class="small">"Citable sections: "
                {if changes.sections.is_empty() { "none (no ## headings)".to_owned() } else { changes.sections.join(" · ") }}
            </p>
            <ActionForm action=publish>
                <CsrfField/>
                <input type="hidden" name="slug" value=changes.slug.clone()/>
                <input type="hidden" name="title" value=changes.title.clone()/>
                <input type="hidden" name="body" value=changes.body.clone()/>
                <input type="hidden" name="reviewed_version" value=changes.current_version.clone().unwrap_or_default()/>
                <button type="submit">{publish_label}</button>
            </ActionForm>
        </div>
    }.into_any()
}

impl PolicyDraft {
    fn read_file(self, ev: leptos::ev::Event) {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let Some(file) = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                .and_then(|input| input.files())
                .and_then(|files| files.get(0))
            else {
                return;
            };
            let name = file.name();
            leptos::task::spawn_local(async move {
                let Ok(text) = wasm_bindgen_futures::JsFuture::from(file.text()).await else {
                    return;
                };
                let Some(text) = text.as_string() else {
                    return;
                };
                let new = self.chosen.get_untracked().is_empty();
                if new && self.slug.get_untracked().is_empty() {
                    self.slug.set(slug_of(&name));
                }
                if new
                    && self.title.get_untracked().is_empty()
                    && let Some(heading) = text.lines().find_map(|l| l.strip_prefix("# "))
                {
                    self.title.set(heading.trim().to_owned());
                }
                self.body.set(text);
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (self, ev);
    }
}

/// `Returns Policy.md` → `returns-policy`.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn slug_of(file_name: &str) -> String {
    let stem = file_name
        .rsplit_once('.')
        .map_or(file_name, |(stem, _)| stem);
    stem.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::slug_of;

    #[test]
    fn a_policy_file_name_becomes_its_slug() {
        assert_eq!(slug_of("Returns Policy.md"), "returns-policy");
        assert_eq!(slug_of("shipping_terms.v2.markdown"), "shipping-terms-v2");
        assert_eq!(slug_of("faq"), "faq");
    }
}
