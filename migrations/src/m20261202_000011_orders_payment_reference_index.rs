//! The mounted sandbox provider learns a charge from the order paid with it
//! (`orders.payment_reference`), at first sight and after every restart:
//! without an index each such lookup scanned the orders table.

use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261202_000011_orders_payment_reference_index"
    }
}

#[derive(DeriveIden)]
enum Orders {
    Table,
    PaymentReference,
}

const INDEX: &str = "idx_orders_payment_reference";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(Orders::Table)
                    .col(Orders::PaymentReference)
                    .if_not_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(INDEX).table(Orders::Table).to_owned())
            .await
    }
}
