//! The schema, one step per file. Steps are written with SeaQuery's builder so
//! the same migration runs on SQLite and PostgreSQL.

pub use sea_orm_migration::prelude::*;

mod m20261130_000001_accounts;
mod m20261130_000002_commerce;
mod m20261130_000003_proposals;
mod m20261130_000004_conversations;
mod m20261130_000005_journal;
mod m20261130_000006_widget;
mod m20261201_000007_order_lines_index;
mod m20261201_000008_conversation_pending_message;
mod m20261201_000009_drop_journal_proposal_index;
mod m20261202_000010_order_source;
mod m20261202_000011_orders_payment_reference_index;
mod m20261203_000012_proposal_submitter;
mod m20261203_000013_widget_lanes;
mod m20261203_000015_handover;
mod m20261203_000016_work;
mod m20261203_000017_proposal_list_indexes;
mod m20261204_000018_approvals_by_approver;
mod m20261205_000019_gateway_inbox;
mod m20261205_000020_gateway_trust;
mod m20261205_000021_gateway_own_keys;
mod m20261206_000022_gateway_outbox;
mod m20261206_000023_returned_parcels;
mod m20261207_000024_gateway_unsigned_pairs;
mod m20261208_000025_gateway_peer_secrets;
mod m20261209_000026_conversation_messages;
mod m20261210_000027_conversation_stop_kinds;
mod m20261211_000028_guest_conversations;
mod m20261212_000029_browser_lane;
mod m20261213_000030_carrier_reads;
mod m20261214_000031_approvals_that_still_count;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261130_000001_accounts::Migration),
            Box::new(m20261130_000002_commerce::Migration),
            Box::new(m20261130_000003_proposals::Migration),
            Box::new(m20261130_000005_journal::Migration),
            Box::new(m20261130_000004_conversations::Migration),
            Box::new(m20261130_000006_widget::Migration),
            Box::new(m20261201_000007_order_lines_index::Migration),
            Box::new(m20261201_000008_conversation_pending_message::Migration),
            Box::new(m20261201_000009_drop_journal_proposal_index::Migration),
            Box::new(m20261202_000010_order_source::Migration),
            Box::new(m20261202_000011_orders_payment_reference_index::Migration),
            Box::new(m20261203_000012_proposal_submitter::Migration),
            Box::new(m20261203_000013_widget_lanes::Migration),
            Box::new(m20261203_000015_handover::Migration),
            Box::new(m20261203_000016_work::Migration),
            Box::new(m20261203_000017_proposal_list_indexes::Migration),
            Box::new(m20261204_000018_approvals_by_approver::Migration),
            Box::new(m20261205_000019_gateway_inbox::Migration),
            Box::new(m20261205_000020_gateway_trust::Migration),
            Box::new(m20261205_000021_gateway_own_keys::Migration),
            Box::new(m20261206_000022_gateway_outbox::Migration),
            Box::new(m20261206_000023_returned_parcels::Migration),
            Box::new(m20261207_000024_gateway_unsigned_pairs::Migration),
            Box::new(m20261208_000025_gateway_peer_secrets::Migration),
            Box::new(m20261209_000026_conversation_messages::Migration),
            Box::new(m20261210_000027_conversation_stop_kinds::Migration),
            Box::new(m20261211_000028_guest_conversations::Migration),
            Box::new(m20261212_000029_browser_lane::Migration),
            Box::new(m20261213_000030_carrier_reads::Migration),
            Box::new(m20261214_000031_approvals_that_still_count::Migration),
        ]
    }
}

/// A UTC timestamp column (`timestamptz` on PostgreSQL, ISO text on SQLite).
pub(crate) fn utc(column: impl IntoIden) -> ColumnDef {
    ColumnDef::new(column)
        .timestamp_with_time_zone()
        .not_null()
        .take()
}

/// An opaque string id (`usr_…`, `prp_…`).
pub(crate) fn id(column: impl IntoIden) -> ColumnDef {
    ColumnDef::new(column).string_len(64).not_null().take()
}
