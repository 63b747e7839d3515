//! One order, as customers and staff see it.

use crate::format::relative_days;
use domain::{Money, OrderSnapshot};
use leptos::prelude::*;

#[component]
pub fn OrderCard(order: OrderSnapshot) -> impl IntoView {
    let now = chrono::Utc::now();
    let delivered = order
        .delivered_at
        .map(|at| format!("delivered {}", relative_days(at, now)))
        .unwrap_or_else(|| order.status.clone());
    let refunded = order
        .refunded()
        .ok()
        .filter(|m| m.amount_minor > 0)
        .map(|m| format!("{} refunded", m.display()));
    let lines = order.lines.clone();
    let currency = order.total.currency;
    view! {
        <article class="card order" data-order=order.id.clone()>
            <header>
                <h3>"Order " {order.id.clone()}</h3>
                <span class="amount">{order.total.display()}</span>
            </header>
            <p class="muted">{delivered} {refunded.map(|r| format!(" · {r}"))}</p>
            <ul class="lines">
                {lines
                    .into_iter()
                    .map(|line| {
                        view! {
                            <li>
                                {line.quantity} " × " {line.description} " — "
                                {Money::new(line.unit_price_minor, currency).display()}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        </article>
    }
}
