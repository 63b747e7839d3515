//! The returns desk's record of returned parcels: when each order's parcel
//! came back, in what condition, and what the inspector noted. The returns
//! group answers inspection tasks from it.

use crate::utc;
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261206_000023_returned_parcels"
    }
}

#[derive(DeriveIden)]
enum ReturnedParcels {
    Table,
    /// The shop's order reference, as on the order.
    OrderId,
    ReceivedAt,
    /// `sealed`, `opened` or `damaged`.
    Condition,
    Note,
    InspectedBy,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ReturnedParcels::Table)
                    .col(
                        ColumnDef::new(ReturnedParcels::OrderId)
                            .string_len(64)
                            .not_null()
                            .primary_key(),
                    )
                    .col(utc(ReturnedParcels::ReceivedAt))
                    .col(
                        ColumnDef::new(ReturnedParcels::Condition)
                            .string_len(16)
                            .not_null(),
                    )
                    .col(ColumnDef::new(ReturnedParcels::Note).text().null())
                    .col(
                        ColumnDef::new(ReturnedParcels::InspectedBy)
                            .string_len(128)
                            .not_null(),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ReturnedParcels::Table).to_owned())
            .await
    }
}
