pub mod nav;
pub mod order_card;
