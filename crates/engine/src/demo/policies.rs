//! The demo shop's policy documents (slug, title, Markdown body).

pub const RETURNS_POLICY: (&str, &str, &str) = (
    "returns-policy",
    "Returns and refunds policy",
    "# Returns and refunds policy

## 1. Scope

This policy covers goods bought in the online shop and delivered to the customer.
Digital goods and gift cards are not covered.

## 2. Damaged or faulty items

Items that arrive damaged or faulty are refunded in full, whatever their
condition, if reported within 30 days of delivery. A photo of the damage helps.

## 3. Unopened items

Unopened items in their original packaging may be returned within 30 days of
delivery for a full refund of the item price. The refund goes back to the
original payment method.

## 4. Opened items

Opened items that are not faulty may be returned within 14 days of delivery.
They are refunded less a restocking fee of 15 percent.

## 5. How refunds are paid

Refunds are paid to the original payment method, in the currency of the order,
within 5 business days after approval. An order can never be refunded for more
than was paid, counting refunds already made through any channel.
",
);

pub const SHIPPING_POLICY: (&str, &str, &str) = (
    "shipping-policy",
    "Shipping policy",
    "# Shipping policy

## 1. Delivery times

Orders ship within 2 business days. Delivery inside the EU takes 3 to 5
business days.

## 2. Shipping costs

Shipping is free for orders over 50.00 EUR; otherwise it costs 4.90 EUR.

## 3. Lost parcels

A parcel not delivered within 15 business days is treated as lost and
replaced or refunded in full.
",
);
