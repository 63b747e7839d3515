//! Money is an integer count of minor units with an ISO 4217 currency.
//! Floating point never touches an amount.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An ISO 4217 currency code (three upper-case ASCII letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Currency([u8; 3]);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error("currency must be a three-letter ISO 4217 code, got {0:?}")]
    InvalidCurrency(String),
    #[error("{code} is not a currency money can be paid in: {why}")]
    NotMoney { code: String, why: &'static str },
    #[error("amount must be positive, got {0}")]
    NotPositive(i64),
    #[error("currencies differ: {0} and {1}")]
    CurrencyMismatch(Currency, Currency),
    #[error("amount overflows")]
    Overflow,
    #[error("{0:?} is not an amount; write it like 79.00")]
    InvalidAmount(String),
}

impl Currency {
    pub const EUR: Currency = Currency(*b"EUR");
    pub const USD: Currency = Currency(*b"USD");

    /// Parses an ISO 4217 code. Lower case is accepted and normalised.
    ///
    /// # Errors
    /// [`MoneyError::InvalidCurrency`] unless the input is three ASCII letters.
    pub fn parse(code: &str) -> Result<Self, MoneyError> {
        let bytes = code.as_bytes();
        if bytes.len() != 3 || !bytes.iter().all(u8::is_ascii_alphabetic) {
            return Err(MoneyError::InvalidCurrency(code.to_owned()));
        }
        Ok(Currency([
            bytes[0].to_ascii_uppercase(),
            bytes[1].to_ascii_uppercase(),
            bytes[2].to_ascii_uppercase(),
        ]))
    }

    /// Parses an ISO 4217 code of a currency that can carry money: one in
    /// circulation, not `XXX` (no currency), `XTS` (testing), a precious metal
    /// (`XAU`, `XAG`, `XPT`, `XPD`), a bond-market or accounting unit (`XBA`…
    /// `XBD`, `XDR`, `XSU`, `XUA`) or a fund code (`CHE`, `USN`…).
    ///
    /// # Errors
    /// [`MoneyError::InvalidCurrency`] for anything but three letters,
    /// [`MoneyError::NotMoney`] saying what the code is instead.
    pub fn parse_money(code: &str) -> Result<Self, MoneyError> {
        let currency = Self::parse(code)?;
        let why = match currency.code() {
            "XXX" => Some("ISO 4217 reserves XXX for transactions without a currency"),
            "XTS" => Some("ISO 4217 reserves XTS for testing"),
            "XAU" | "XAG" | "XPT" | "XPD" => Some("it is a precious metal, not a currency"),
            "XBA" | "XBB" | "XBC" | "XBD" => Some("it is a bond-market unit, not a currency"),
            "XDR" | "XSU" | "XUA" => Some("it is a unit of account, not a currency"),
            "BOV" | "CHE" | "CHW" | "CLF" | "COU" | "MXV" | "USN" | "UYI" | "UYW" => {
                Some("it is an ISO 4217 fund code, not a currency")
            }
            code if !CIRCULATING.contains(&code) => {
                Some("it is not an ISO 4217 code of a currency in circulation")
            }
            _ => None,
        };
        match why {
            Some(why) => Err(MoneyError::NotMoney {
                code: currency.code().to_owned(),
                why,
            }),
            None => Ok(currency),
        }
    }

    pub fn code(&self) -> &str {
        // Constructed only from ASCII letters.
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }

    /// Digits after the decimal point (ISO 4217 exponent) for display.
    pub fn minor_digits(&self) -> u32 {
        match self.code() {
            "JPY" | "KRW" | "ISK" | "CLP" | "VND" | "UGX" | "XAF" | "XOF" => 0,
            "BHD" | "KWD" | "OMR" | "JOD" | "TND" | "LYD" | "IQD" => 3,
            _ => 2,
        }
    }
}

/// ISO 4217 codes of currencies in circulation (list one, 2025), including
/// ones being replaced that may still be paid in.
const CIRCULATING: &[&str] = &[
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT",
    "BGN", "BHD", "BIF", "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD",
    "CDF", "CHF", "CLP", "CNY", "COP", "CRC", "CUC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP",
    "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GNF",
    "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IQD", "IRR", "ISK", "JMD",
    "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP",
    "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR",
    "MVR", "MWK", "MXN", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB",
    "PEN", "PGK", "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD",
    "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SLL", "SOS", "SRD", "SSP", "STN", "SVC", "SYP",
    "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD",
    "UYU", "UZS", "VED", "VES", "VND", "VUV", "WST", "XAF", "XCD", "XCG", "XOF", "XPF", "YER",
    "ZAR", "ZMW", "ZWG", "ZWL",
];

impl TryFrom<String> for Currency {
    type Error = MoneyError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Currency::parse(&value)
    }
}

impl From<Currency> for String {
    fn from(value: Currency) -> Self {
        value.code().to_owned()
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// An amount of money: integer minor units (cents for EUR) and a currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Money {
    pub amount_minor: i64,
    pub currency: Currency,
}

impl Money {
    pub fn new(amount_minor: i64, currency: Currency) -> Self {
        Money {
            amount_minor,
            currency,
        }
    }

    /// A strictly positive amount, as a refund or payment must be.
    ///
    /// # Errors
    /// [`MoneyError::NotPositive`] for zero or negative amounts.
    pub fn positive(amount_minor: i64, currency: Currency) -> Result<Self, MoneyError> {
        if amount_minor <= 0 {
            return Err(MoneyError::NotPositive(amount_minor));
        }
        Ok(Money::new(amount_minor, currency))
    }

    /// Parses a decimal amount as people type it (`500`, `79.00`, `0.5`) in
    /// the currency's minor units, exactly, without floating point.
    ///
    /// # Errors
    /// [`MoneyError::InvalidAmount`] for anything else (signs, letters, more
    /// decimals than the currency has).
    pub fn parse_decimal(text: &str, currency: Currency) -> Result<Money, MoneyError> {
        let text = text.trim();
        let invalid = || MoneyError::InvalidAmount(text.to_owned());
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let digits = currency.minor_digits() as usize;
        let all_digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
        if whole.is_empty()
            || !all_digits(whole)
            || !all_digits(fraction)
            || fraction.len() > digits
        {
            return Err(invalid());
        }
        let scale = 10i64.pow(currency.minor_digits());
        let whole: i64 = whole.parse().map_err(|_| invalid())?;
        let fraction: i64 = if fraction.is_empty() {
            0
        } else {
            format!("{fraction:0<digits$}")
                .parse()
                .map_err(|_| invalid())?
        };
        whole
            .checked_mul(scale)
            .and_then(|w| w.checked_add(fraction))
            .map(|minor| Money::new(minor, currency))
            .ok_or(MoneyError::Overflow)
    }

    /// # Errors
    /// [`MoneyError::CurrencyMismatch`] or [`MoneyError::Overflow`].
    pub fn checked_sub(self, other: Money) -> Result<Money, MoneyError> {
        if self.currency != other.currency {
            return Err(MoneyError::CurrencyMismatch(self.currency, other.currency));
        }
        self.amount_minor
            .checked_sub(other.amount_minor)
            .map(|amount| Money::new(amount, self.currency))
            .ok_or(MoneyError::Overflow)
    }

    /// Formats as `79.00 EUR`: exact, from integers, never through floats.
    pub fn display(&self) -> String {
        let digits = self.currency.minor_digits();
        let sign = if self.amount_minor < 0 { "-" } else { "" };
        let abs = self.amount_minor.unsigned_abs();
        if digits == 0 {
            return format!("{sign}{abs} {}", self.currency);
        }
        let scale = 10u64.pow(digits);
        format!(
            "{sign}{}.{:0width$} {}",
            abs / scale,
            abs % scale,
            self.currency,
            width = digits as usize
        )
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn currency_codes_are_normalised_to_upper_case() {
        assert_eq!(Currency::parse("eur").unwrap(), Currency::EUR);
    }

    #[test]
    fn currency_rejects_anything_but_three_letters() {
        for bad in ["", "EU", "EURO", "E1R", "€UR"] {
            assert!(Currency::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn only_currencies_that_carry_money_parse_as_money() {
        assert_eq!(Currency::parse_money("eur").unwrap(), Currency::EUR);
        assert!(Currency::parse_money("JPY").is_ok());
        for code in ["XXX", "XTS", "XAU", "XAG", "XDR", "XBA", "CHE", "QQQ"] {
            let error = Currency::parse_money(code).unwrap_err();
            assert!(matches!(error, MoneyError::NotMoney { .. }), "{code}");
            assert!(error.to_string().starts_with(code), "{error}");
        }
        assert!(matches!(
            Currency::parse_money("E1R"),
            Err(MoneyError::InvalidCurrency(_))
        ));
    }

    #[test]
    fn money_displays_exactly_from_minor_units() {
        assert_eq!(Money::new(7900, Currency::EUR).display(), "79.00 EUR");
        assert_eq!(Money::new(5, Currency::EUR).display(), "0.05 EUR");
        assert_eq!(
            Money::new(1200, Currency::parse("JPY").unwrap()).display(),
            "1200 JPY"
        );
        assert_eq!(
            Money::new(-1001, Currency::parse("KWD").unwrap()).display(),
            "-1.001 KWD"
        );
    }

    #[test]
    fn subtracting_different_currencies_is_refused() {
        let eur = Money::new(100, Currency::EUR);
        let usd = Money::new(100, Currency::USD);
        assert!(matches!(
            eur.checked_sub(usd),
            Err(MoneyError::CurrencyMismatch(_, _))
        ));
    }

    #[test]
    fn decimal_amounts_parse_exactly_into_minor_units() {
        let eur = |t: &str| Money::parse_decimal(t, Currency::EUR).map(|m| m.amount_minor);
        assert_eq!(eur("79.00"), Ok(7900));
        assert_eq!(eur("79.5"), Ok(7950));
        assert_eq!(eur(" 500 "), Ok(50000));
        for bad in ["", "-1", "1.234", "1,00", "abc", ".5", "1e3"] {
            assert!(eur(bad).is_err(), "{bad:?} accepted");
        }
        let jpy = Currency::parse("JPY").unwrap();
        assert_eq!(
            Money::parse_decimal("1200", jpy).unwrap().amount_minor,
            1200
        );
        assert!(Money::parse_decimal("12.5", jpy).is_err());
    }

    #[test]
    fn refunds_must_be_positive() {
        assert!(Money::positive(0, Currency::EUR).is_err());
        assert!(Money::positive(-1, Currency::EUR).is_err());
        assert!(Money::positive(1, Currency::EUR).is_ok());
    }
}
