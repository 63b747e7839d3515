//! The exclusive browser lane and what it reads.
//!
//! - `shipments`: the carrier and tracking number each shipped order went
//!   out with, so a carrier's tracking page can be looked up.
//! - `resource_leases`: one holder at a time per named resource (the
//!   browser), across every process sharing this database. A holder that
//!   dies leaves a lease that expires.
//! - `browser_checks`: what a page said when the browser read it, with its
//!   provenance (URL, time, the screenshot and its SHA-256), kept as
//!   evidence a proposal can cite and an approver can look at.

use crate::utc;
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261212_000029_browser_lane"
    }
}

#[derive(DeriveIden)]
enum Shipments {
    Table,
    OrderId,
    Carrier,
    TrackingNumber,
}

#[derive(DeriveIden)]
enum ResourceLeases {
    Table,
    Resource,
    Holder,
    Until,
}

#[derive(DeriveIden)]
enum BrowserChecks {
    Table,
    Id,
    OrderId,
    ConversationId,
    Url,
    CapturedAt,
    Status,
    DeliveredOn,
    PageText,
    ScreenshotSha256,
    Screenshot,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Shipments::Table)
                    .col(
                        ColumnDef::new(Shipments::OrderId)
                            .string_len(64)
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(Shipments::Carrier).string_len(64).not_null())
                    .col(
                        ColumnDef::new(Shipments::TrackingNumber)
                            .string_len(64)
                            .not_null(),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ResourceLeases::Table)
                    .col(
                        ColumnDef::new(ResourceLeases::Resource)
                            .string_len(64)
                            .not_null()
                            .primary_key(),
                    )
                    .col(
                        ColumnDef::new(ResourceLeases::Holder)
                            .string_len(128)
                            .not_null(),
                    )
                    .col(utc(ResourceLeases::Until))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(BrowserChecks::Table)
                    .col(
                        ColumnDef::new(BrowserChecks::Id)
                            .string_len(64)
                            .not_null()
                            .primary_key(),
                    )
                    .col(
                        ColumnDef::new(BrowserChecks::OrderId)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(BrowserChecks::ConversationId)
                            .string_len(64)
                            .null(),
                    )
                    .col(ColumnDef::new(BrowserChecks::Url).text().not_null())
                    .col(utc(BrowserChecks::CapturedAt))
                    .col(
                        ColumnDef::new(BrowserChecks::Status)
                            .string_len(32)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(BrowserChecks::DeliveredOn)
                            .string_len(10)
                            .null(),
                    )
                    .col(ColumnDef::new(BrowserChecks::PageText).text().not_null())
                    .col(
                        ColumnDef::new(BrowserChecks::ScreenshotSha256)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(ColumnDef::new(BrowserChecks::Screenshot).blob().not_null())
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("browser_checks_by_order")
                    .table(BrowserChecks::Table)
                    .col(BrowserChecks::OrderId)
                    .col(BrowserChecks::CapturedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            BrowserChecks::Table.into_iden(),
            ResourceLeases::Table.into_iden(),
            Shipments::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
