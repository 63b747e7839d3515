//! The shop's records that agents read and refunds change: orders with line
//! items and refund history, and versioned policy documents.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000002_commerce"
    }
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum Orders {
    Table,
    Id,
    CustomerId,
    Status,
    Currency,
    TotalMinor,
    PaymentReference,
    PlacedAt,
    DeliveredAt,
    Version,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum OrderLines {
    Table,
    Id,
    OrderId,
    Sku,
    Description,
    Quantity,
    UnitPriceMinor,
}

#[derive(DeriveIden)]
enum OrderRefunds {
    Table,
    Id,
    OrderId,
    AmountMinor,
    Currency,
    Channel,
    Reference,
    CreatedAt,
}

#[derive(DeriveIden)]
enum PolicyDocuments {
    Table,
    Id,
    Slug,
    Title,
    CurrentVersion,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum PolicyVersions {
    Table,
    Id,
    DocumentId,
    ContentHash,
    Title,
    Body,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Orders::Table)
                    .col(id(Orders::Id).primary_key())
                    .col(id(Orders::CustomerId))
                    .col(ColumnDef::new(Orders::Status).string_len(32).not_null())
                    .col(ColumnDef::new(Orders::Currency).string_len(3).not_null())
                    .col(ColumnDef::new(Orders::TotalMinor).big_integer().not_null())
                    .col(
                        ColumnDef::new(Orders::PaymentReference)
                            .string_len(128)
                            .not_null(),
                    )
                    .col(utc(Orders::PlacedAt))
                    .col(
                        ColumnDef::new(Orders::DeliveredAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(Orders::Version)
                            .big_integer()
                            .not_null()
                            .default(1),
                    )
                    .col(utc(Orders::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(Orders::Table, Orders::CustomerId)
                            .to(Users::Table, Users::Id),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_orders_customer")
                    .table(Orders::Table)
                    .col(Orders::CustomerId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(OrderLines::Table)
                    .col(
                        ColumnDef::new(OrderLines::Id)
                            .big_integer()
                            .not_null()
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(id(OrderLines::OrderId))
                    .col(ColumnDef::new(OrderLines::Sku).string_len(64).not_null())
                    .col(
                        ColumnDef::new(OrderLines::Description)
                            .string_len(500)
                            .not_null(),
                    )
                    .col(ColumnDef::new(OrderLines::Quantity).integer().not_null())
                    .col(
                        ColumnDef::new(OrderLines::UnitPriceMinor)
                            .big_integer()
                            .not_null(),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(OrderLines::Table, OrderLines::OrderId)
                            .to(Orders::Table, Orders::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(OrderRefunds::Table)
                    .col(id(OrderRefunds::Id).primary_key())
                    .col(id(OrderRefunds::OrderId))
                    .col(
                        ColumnDef::new(OrderRefunds::AmountMinor)
                            .big_integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(OrderRefunds::Currency)
                            .string_len(3)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(OrderRefunds::Channel)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(OrderRefunds::Reference)
                            .string_len(200)
                            .not_null(),
                    )
                    .col(utc(OrderRefunds::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(OrderRefunds::Table, OrderRefunds::OrderId)
                            .to(Orders::Table, Orders::Id),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_order_refunds_order")
                    .table(OrderRefunds::Table)
                    .col(OrderRefunds::OrderId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(PolicyDocuments::Table)
                    .col(id(PolicyDocuments::Id).primary_key())
                    .col(
                        ColumnDef::new(PolicyDocuments::Slug)
                            .string_len(128)
                            .not_null()
                            .unique_key(),
                    )
                    .col(
                        ColumnDef::new(PolicyDocuments::Title)
                            .string_len(300)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(PolicyDocuments::CurrentVersion)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(utc(PolicyDocuments::CreatedAt))
                    .col(utc(PolicyDocuments::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(PolicyVersions::Table)
                    .col(id(PolicyVersions::Id).primary_key())
                    .col(id(PolicyVersions::DocumentId))
                    .col(
                        ColumnDef::new(PolicyVersions::ContentHash)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(PolicyVersions::Title)
                            .string_len(300)
                            .not_null(),
                    )
                    .col(ColumnDef::new(PolicyVersions::Body).text().not_null())
                    .col(utc(PolicyVersions::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(PolicyVersions::Table, PolicyVersions::DocumentId)
                            .to(PolicyDocuments::Table, PolicyDocuments::Id),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_policy_versions_doc_hash")
                    .table(PolicyVersions::Table)
                    .col(PolicyVersions::DocumentId)
                    .col(PolicyVersions::ContentHash)
                    .unique()
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            PolicyVersions::Table.into_iden(),
            PolicyDocuments::Table.into_iden(),
            OrderRefunds::Table.into_iden(),
            OrderLines::Table.into_iden(),
            Orders::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
