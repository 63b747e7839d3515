//! Orders fed by a shop's backend (`PUT /api/v1/orders/{external_id}`, the
//! import command): the shop's own version of each order, kept apart from
//! Countersign's `orders.version` (which refund bookings bump and approvals
//! compare), the hash of the content the shop sent at that version (a
//! repeat is recognised without storing the body), shipping and discount
//! (the total is checked against lines + shipping − discount), and the
//! delivery events the status and delivery time derive from.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261202_000010_order_source"
    }
}

#[derive(DeriveIden)]
enum Orders {
    Table,
    Id,
    SourceVersion,
    SourceHash,
    ShippingMinor,
    DiscountMinor,
}

#[derive(DeriveIden)]
enum OrderEvents {
    Table,
    Id,
    OrderId,
    Kind,
    At,
}

const INDEX: &str = "idx_order_events_order";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite's ALTER TABLE adds one at a time.
        for column in [
            ColumnDef::new(Orders::SourceVersion)
                .big_integer()
                .null()
                .take(),
            ColumnDef::new(Orders::SourceHash)
                .string_len(64)
                .null()
                .take(),
            ColumnDef::new(Orders::ShippingMinor)
                .big_integer()
                .not_null()
                .default(0)
                .take(),
            ColumnDef::new(Orders::DiscountMinor)
                .big_integer()
                .not_null()
                .default(0)
                .take(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Orders::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(OrderEvents::Table)
                    .col(
                        ColumnDef::new(OrderEvents::Id)
                            .big_integer()
                            .not_null()
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(id(OrderEvents::OrderId))
                    .col(ColumnDef::new(OrderEvents::Kind).string_len(16).not_null())
                    .col(utc(OrderEvents::At))
                    .foreign_key(
                        ForeignKey::create()
                            .from(OrderEvents::Table, OrderEvents::OrderId)
                            .to(Orders::Table, Orders::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(OrderEvents::Table)
                    .col(OrderEvents::OrderId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(OrderEvents::Table).to_owned())
            .await?;
        for column in [
            Orders::DiscountMinor,
            Orders::ShippingMinor,
            Orders::SourceHash,
            Orders::SourceVersion,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Orders::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
