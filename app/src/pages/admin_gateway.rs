//! The agent-groups section of `/admin` (see `crate::gateway_admin`): what
//! the gateway trusts, with the forms that change it
//! (`crate::gateway_trust`), and what crossed it.

use crate::components::copy_button::CopyButton;
use crate::csrf::CsrfField;
use crate::format::utc;
use crate::gateway_admin::{AllowedPair, GatewayInfo, GatewayTaskRow, admin_gateway};
use crate::gateway_trust::{
    AdminGatewayAllowPair, AdminGatewayIssuePeerSecret, AdminGatewayPinCard, AdminGatewayRetireKey,
    AdminGatewayRevokePeerSecrets, AdminGatewayRotateKey, AdminGatewaySetPeer,
    AdminGatewayWithdrawPair,
};
use crate::pages::admin::outcome;
use leptos::form::ActionForm;
use leptos::prelude::*;

/// The forms that change the gateway's trust.
#[derive(Clone, Copy)]
struct TrustActions {
    set_peer: ServerAction<AdminGatewaySetPeer>,
    pin_card: ServerAction<AdminGatewayPinCard>,
    retire: ServerAction<AdminGatewayRetireKey>,
    allow: ServerAction<AdminGatewayAllowPair>,
    withdraw: ServerAction<AdminGatewayWithdrawPair>,
    issue_secret: ServerAction<AdminGatewayIssuePeerSecret>,
    revoke_secrets: ServerAction<AdminGatewayRevokePeerSecrets>,
    rotate: ServerAction<AdminGatewayRotateKey>,
}

impl TrustActions {
    fn new() -> Self {
        Self {
            set_peer: ServerAction::new(),
            pin_card: ServerAction::new(),
            retire: ServerAction::new(),
            allow: ServerAction::new(),
            withdraw: ServerAction::new(),
            issue_secret: ServerAction::new(),
            revoke_secrets: ServerAction::new(),
            rotate: ServerAction::new(),
        }
    }

    /// Changes whenever one of them has run: the overview reloads.
    fn version(self) -> [usize; 8] {
        [
            self.set_peer.version().get(),
            self.pin_card.version().get(),
            self.retire.version().get(),
            self.allow.version().get(),
            self.withdraw.version().get(),
            self.issue_secret.version().get(),
            self.revoke_secrets.version().get(),
            self.rotate.version().get(),
        ]
    }
}

/// This group's own key: what peers pin (the fingerprint to read out on
/// first contact), and its rotation.
fn own_keys_section(
    keys: Vec<(String, String, Option<domain::Timestamp>)>,
    error: Option<String>,
    actions: TrustActions,
) -> impl IntoView {
    view! {
        <h3>"This group's key"</h3>
        {error.map(|error| view! { <p class="error" role="alert">{format!("The key broker did not answer: {error}")}</p> })}
        {if keys.is_empty() {
            view! { <p class="muted" data-testid="gateway-own-keys">"This group signs nothing: it has no master key and no Vault broker, so it can receive but not send."</p> }.into_any()
        } else {
            view! {
                <ul class="plain" data-testid="gateway-own-keys">
                    {keys.into_iter().map(|(kid, fingerprint, until)| view! {
                        <li>
                            <code>{kid}</code> " "
                            {until.map_or_else(|| "signs now".to_owned(), |u| format!("verifies until {}", utc(u)))}
                            <br/><span class="small">"fingerprint "</span><code class="small">{fingerprint}</code>
                        </li>
                    }).collect_view()}
                </ul>
                <ActionForm action=actions.rotate attr:class="inline">
                    <CsrfField/>
                    <button type="submit" class="secondary">"Rotate this group's key"</button>
                </ActionForm>
            }.into_any()
        }}
        {outcome(actions.rotate)}
    }
}

fn kinds_section(kinds: &[(String, String)]) -> impl IntoView {
    view! {
        <h3>"Task kinds"</h3>
        <ul class="plain" data-testid="gateway-kinds">
            {kinds.iter().map(|(kind, description)| view! {
                <li><code>{kind.clone()}</code> " — " {description.clone()}</li>
            }).collect_view()}
        </ul>
    }
}

fn peers_section(peers: Vec<(String, String)>, actions: TrustActions) -> impl IntoView {
    view! {
        <h3>"Peers"</h3>
        {if peers.is_empty() {
            view! { <p class="muted">"No peer's address is set yet."</p> }.into_any()
        } else {
            view! { <ul class="plain" data-testid="gateway-peers">{peers.into_iter().map(|(group, url)| { let marker = group.clone(); view! { <li data-peer=marker>{group} " — " <code>{url}</code></li> } }).collect_view()}</ul> }.into_any()
        }}
        <ActionForm action=actions.set_peer attr:class="inline" attr:data-testid="gateway-set-peer">
            <CsrfField/>
            <label for="gateway-peer-group">"Group"</label>
            <input id="gateway-peer-group" name="group" required maxlength="63" autocomplete="off" placeholder="returns"/>
            <label for="gateway-peer-url">"A2A endpoint"</label>
            <input id="gateway-peer-url" name="url" required maxlength="300" inputmode="url" placeholder="https://returns.example/a2a"/>
            <button type="submit">"Set address"</button>
        </ActionForm>
        {outcome(actions.set_peer)}
    }
}

fn keys_section(
    keys: Vec<(String, Option<domain::Timestamp>)>,
    actions: TrustActions,
) -> impl IntoView {
    view! {
        <h3>"Pinned peer keys"</h3>
        <ul class="plain" data-testid="gateway-keys">
            {keys.into_iter().map(|(kid, until)| {
                let label = format!("Retire {kid}");
                let select_id = format!("gateway-retire-{}", kid.replace('/', "-"));
                let (marker, shown, field) = (kid.clone(), kid.clone(), kid);
                view! {
                <li data-kid=marker>
                    <code>{shown}</code> " "
                    {until.map_or_else(|| "current".to_owned(), |u| format!("verifies until {}", utc(u)))}
                    {until.is_none().then(|| view! {
                        <ActionForm action=actions.retire attr:class="inline">
                            <CsrfField/>
                            <input type="hidden" name="kid" value=field.clone()/>
                            <label for=select_id.clone() class="small">"Stop trusting it"</label>
                            <select id=select_id name="when">
                                <option value="overlap" selected>"in 24 hours (tasks signed before a rotation still verify)"</option>
                                <option value="now">"now (the key is compromised)"</option>
                            </select>
                            <button type="submit" class="secondary small">{label.clone()}</button>
                        </ActionForm>
                    })}
                </li>
            }}).collect_view()}
        </ul>
        <h4>"Pin keys from a peer's signed agent card"</h4>
        <p class="muted small">
            "The first time, ask the peer's admin for their current key's fingerprint ("
            <code>"countersign gateway keys"</code>
            " prints it) and enter it here; after that, a key pinned before vouches for the card and the fingerprint can stay empty."
        </p>
        <ActionForm action=actions.pin_card attr:data-testid="gateway-pin-card">
            <CsrfField/>
            <label for="gateway-card-group">"Group"</label>
            <input id="gateway-card-group" name="group" required maxlength="63" autocomplete="off" placeholder="returns"/>
            <label for="gateway-card-url">"Its address (the card is at /.well-known/agent-card.json)"</label>
            <input id="gateway-card-url" name="url" required maxlength="300" inputmode="url" placeholder="https://returns.example"/>
            <label for="gateway-card-fingerprint">"Fingerprint of its current key (first contact)"</label>
            <input id="gateway-card-fingerprint" name="fingerprint" maxlength="100" autocomplete="off" spellcheck="false"/>
            <button type="submit">"Pin from card"</button>
        </ActionForm>
        {outcome(actions.pin_card)}
        {outcome(actions.retire)}
    }
}

/// A plain peer's new secret, shown once.
fn new_secret_view(result: Option<Result<String, crate::error::AppError>>) -> impl IntoView {
    result.map(|result| match result {
        Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
        Ok(secret) => view! {
            <div class="notice" role="status" data-testid="gateway-new-secret">
                <p>"Copy the secret now: it is not stored and will not be shown again. The peer sends it as "
                    <code>"Authorization: Bearer …"</code> "."</p>
                <code class="small" data-testid="gateway-secret">{secret.clone()}</code>
                " " <CopyButton text=secret label="Copy the secret"/>
            </div>
        }
        .into_any(),
    })
}

fn plain_peers_section(
    secrets: Vec<(String, domain::Timestamp, bool)>,
    actions: TrustActions,
) -> impl IntoView {
    let mut live: Vec<String> = secrets
        .iter()
        .filter(|(_, _, revoked)| !revoked)
        .map(|(group, _, _)| group.clone())
        .collect();
    live.sort();
    live.dedup();
    view! {
        <h3>"Plain A2A peers"</h3>
        <p class="muted small">
            "A peer that cannot sign Countersign's tasks (an a2a-sdk agent) proves which group it is with a secret issued here; "
            "it may send only what a pair allowed without signatures lets it, and what it sends is marked unsigned."
        </p>
        {if secrets.is_empty() {
            view! { <p class="muted" data-testid="gateway-peer-secrets">"No secret issued."</p> }.into_any()
        } else {
            view! {
                <ul class="plain" data-testid="gateway-peer-secrets">
                    {secrets.into_iter().map(|(group, at, revoked)| view! {
                        <li>{group} " · issued " {utc(at)} " · " {if revoked { "revoked" } else { "live" }}</li>
                    }).collect_view()}
                </ul>
            }.into_any()
        }}
        {live.into_iter().map(|group| {
            let label = format!("Revoke {group}'s secrets");
            view! {
                <ActionForm action=actions.revoke_secrets attr:class="inline">
                    <CsrfField/>
                    <input type="hidden" name="group" value=group/>
                    <button type="submit" class="secondary small">{label}</button>
                </ActionForm>
            }
        }).collect_view()}
        <ActionForm action=actions.issue_secret attr:class="inline" attr:data-testid="gateway-issue-secret">
            <CsrfField/>
            <label for="gateway-secret-group">"Plain peer's group"</label>
            <input id="gateway-secret-group" name="group" required maxlength="63" autocomplete="off" placeholder="plain-agent"/>
            <button type="submit">"Issue a secret"</button>
        </ActionForm>
        {move || new_secret_view(actions.issue_secret.value().get())}
        {outcome(actions.revoke_secrets)}
    }
}

fn pairs_section(
    me: String,
    pairs: Vec<AllowedPair>,
    kinds: Vec<(String, String)>,
    actions: TrustActions,
) -> impl IntoView {
    view! {
        <h3>"Allowed pairs"</h3>
        {if pairs.is_empty() {
            view! { <p class="muted" data-testid="gateway-pairs">"No pair is allowed: every task is refused."</p> }.into_any()
        } else {
            view! {
                <ul class="plain" data-testid="gateway-pairs">
                    {pairs.into_iter().map(|pair| {
                        let words = format!(
                            "{} → {}: {}{}",
                            pair.from, pair.to, pair.kind,
                            if pair.unsigned { ", without signatures (what comes of it is unsigned)" } else { "" }
                        );
                        let label = format!("Withdraw {} → {}: {}", pair.from, pair.to, pair.kind);
                        let marker = format!("{}>{}:{}", pair.from, pair.to, pair.kind);
                        view! {
                        <li data-pair=marker data-unsigned=pair.unsigned.to_string()>
                            {words} " "
                            <ActionForm action=actions.withdraw attr:class="inline">
                                <CsrfField/>
                                <input type="hidden" name="from" value=pair.from/>
                                <input type="hidden" name="to" value=pair.to/>
                                <input type="hidden" name="kind" value=pair.kind/>
                                {pair.unsigned.then(|| view! { <input type="hidden" name="unsigned" value="on"/> })}
                                <button type="submit" class="secondary small">{label}</button>
                            </ActionForm>
                        </li>
                    }}).collect_view()}
                </ul>
            }.into_any()
        }}
        <ActionForm action=actions.allow attr:data-testid="gateway-allow-pair">
            <CsrfField/>
            <label for="gateway-pair-from">"From group"</label>
            <input id="gateway-pair-from" name="from" required maxlength="63" autocomplete="off" placeholder="support"/>
            <label for="gateway-pair-to">"To group"</label>
            <input id="gateway-pair-to" name="to" required maxlength="63" autocomplete="off" value=me/>
            <label for="gateway-pair-kind">"Task kind"</label>
            <select id="gateway-pair-kind" name="kind" required>
                {kinds.into_iter().map(|(kind, _)| { let value = kind.clone(); view! { <option value=value>{kind}</option> } }).collect_view()}
            </select>
            <label class="check">
                <input type="checkbox" name="unsigned"/>
                " without signatures (a plain A2A peer; what comes of it is marked unsigned and is never evidence)"
            </label>
            <button type="submit">"Allow pair"</button>
        </ActionForm>
        {outcome(actions.allow)}
        {outcome(actions.withdraw)}
    }
}

fn tasks_table(
    caption: &'static str,
    peer: &'static str,
    rows: Vec<GatewayTaskRow>,
    testid: &'static str,
) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted" data-testid=testid>{format!("{caption}: none yet.")}</p> }
            .into_any();
    }
    view! {
        <table data-testid=testid>
            <caption>{caption}</caption>
            <thead><tr><th>"When"</th><th>{peer}</th><th>"Kind"</th><th>"State"</th><th>"Route"</th><th>"Depth"</th><th>"Spent"</th><th>"Task key"</th><th>"Note"</th></tr></thead>
            <tbody>
                {rows.into_iter().map(|row| {
                    let state = row.state.clone();
                    view! {
                    <tr data-task=row.id.clone() data-state=state>
                        <td>{utc(row.at)}</td>
                        <td>{row.peer}</td>
                        <td><code>{row.kind}</code></td>
                        <td>{row.state}</td>
                        <td>{row.route}</td>
                        <td>{row.depth}</td>
                        <td>{row.spent.unwrap_or_else(|| "—".to_owned())}</td>
                        <td><code class="small">{row.task_key}</code></td>
                        <td>{row.note.unwrap_or_default()}</td>
                    </tr>
                }}).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

fn overview(info: GatewayInfo, actions: TrustActions) -> impl IntoView {
    let Some(group) = info.group.clone() else {
        return view! {
            <p class="muted">"The gateway is off here: set COUNTERSIGN_GATEWAY_GROUP to let other agent groups send this one tasks."</p>
        }
        .into_any();
    };
    view! {
        <p>"This agent group: " <strong data-testid="gateway-group">{group.clone()}</strong></p>
        {own_keys_section(info.own_keys, info.own_keys_error, actions)}
        {kinds_section(&info.kinds)}
        {peers_section(info.peers, actions)}
        {keys_section(info.keys, actions)}
        {pairs_section(group, info.pairs, info.kinds, actions)}
        {plain_peers_section(info.peer_secrets, actions)}
        {tasks_table("Tasks received", "From", info.inbound, "gateway-inbound")}
        {tasks_table("Tasks sent", "To", info.outbound, "gateway-outbound")}
        <h3>"Refused tasks"</h3>
        {if info.refusals.is_empty() {
            view! { <p class="muted" data-testid="gateway-refusals">"None refused lately."</p> }.into_any()
        } else {
            view! {
                <ul class="plain" data-testid="gateway-refusals">
                    {info.refusals.into_iter().map(|refusal| {
                        let code = refusal.code.clone();
                        view! {
                        <li data-code=code>
                            <strong>{refusal.code}</strong> " · " {utc(refusal.at)} " · from "
                            {refusal.claimed_from.unwrap_or_else(|| "?".to_owned())} " · "
                            <code>{refusal.claimed_kind.unwrap_or_default()}</code>
                            <p>{refusal.reason}</p>
                        </li>
                    }}).collect_view()}
                </ul>
            }.into_any()
        }}
    }
    .into_any()
}

/// The gateway: who this group trusts and talks to, and what crossed it.
#[component]
pub fn GatewayOverview() -> impl IntoView {
    let actions = TrustActions::new();
    let info = Resource::new(move || actions.version(), |_| admin_gateway());
    view! {
        <section class="card wide" data-testid="gateway-admin">
            <h2>"Agent groups (gateway)"</h2>
            <Transition fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match info.await {
                        Err(error) => view! { <p class="error" role="alert">{error.to_string()}</p> }.into_any(),
                        Ok(info) => overview(info, actions).into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}
