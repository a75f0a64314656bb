//! Reading `Retry-After` (RFC 9110, section 10.2.3): delta-seconds or an HTTP-date.

use http::header::RETRY_AFTER;
use http::HeaderMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a response asks to wait, as of `now`: `None` when it carries no `Retry-After` or
/// one that does not parse. A date in the past asks for no wait.
pub(super) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Digits only: a number too large for a u64 is still a very long wait.
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let date = parse_http_date(value)?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses the three forms RFC 9110 (section 5.6.7) asks recipients to accept:
///
/// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
/// - RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`
/// - asctime: `Sun Nov  6 08:49:37 1994`
///
/// The day name is not checked against the date: the date is what matters.
pub(super) fn parse_http_date(text: &str) -> Option<SystemTime> {
    let fields: Vec<&str> = text.split_ascii_whitespace().collect();
    let (year, month, day, time) = match fields.as_slice() {
        [day_name, day, month, year, time, "GMT"] if day_name.ends_with(',') => (
            parse_number(year, 4)?,
            month_number(month)?,
            parse_number(day, 2)?,
            *time,
        ),
        [day_name, date, time, "GMT"] if day_name.ends_with(',') => {
            let mut parts = date.split('-');
            let day = parse_number(parts.next()?, 2)?;
            let month = month_number(parts.next()?)?;
            let year = parse_number(parts.next()?, 2)?;
            if parts.next().is_some() {
                return None;
            }
            // RFC 850's two-digit year: the RFC's rule is "no more than 50 years ahead";
            // dates a retry hint may carry are near today.
            let year = if year < 70 { 2000 + year } else { 1900 + year };
            (year, month, day, *time)
        }
        [_day_name, month, day, time, year] => {
            let day = if day.len() == 1 {
                parse_number(day, 1)?
            } else {
                parse_number(day, 2)?
            };
            (parse_number(year, 4)?, month_number(month)?, day, *time)
        }
        _ => return None,
    };
    let mut clock = time.split(':');
    let hour = parse_number(clock.next()?, 2)?;
    let minute = parse_number(clock.next()?, 2)?;
    let second = parse_number(clock.next()?, 2)?;
    if clock.next().is_some()
        || hour > 23
        || minute > 59
        || second > 60
        || day == 0
        || day > days_in_month(year, month)
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + i64::from(hour * 3_600 + minute * 60 + second);
    // A date before 1970 is long past: as good as the epoch.
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

/// A number of exactly `digits` ASCII digits.
fn parse_number(text: &str, digits: usize) -> Option<u32> {
    if text.len() != digits || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn month_number(name: &str) -> Option<u32> {
    let index = MONTHS.iter().position(|month| *month == name)?;
    u32::try_from(index + 1).ok()
}

fn is_leap(year: u32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar (Howard
/// Hinnant's `days_from_civil`).
fn days_from_civil(year: u32, month: u32, day: u32) -> i64 {
    let year = i64::from(year) - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Formats `time` as an IMF-fixdate, for tests that need a date relative to now.
#[cfg(test)]
pub(super) fn format_http_date(time: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    let seconds = time.duration_since(UNIX_EPOCH).unwrap().as_secs();
    let days = i64::try_from(seconds / 86_400).unwrap();
    let clock = seconds % 86_400;
    // Hinnant's `civil_from_days`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        DAYS[usize::try_from(days % 7).unwrap()],
        day,
        MONTHS[usize::try_from(month - 1).unwrap()],
        year,
        clock / 3_600,
        clock % 3_600 / 60,
        clock % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    const RFC_EXAMPLE: u64 = 784_111_777; // Sun, 06 Nov 1994 08:49:37 GMT

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn parses_the_three_date_forms() {
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse_http_date(text), Some(at(RFC_EXAMPLE)), "{text}");
        }
        assert_eq!(
            parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"),
            Some(UNIX_EPOCH)
        );
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2028 23:59:59 GMT"),
            Some(at(1_835_481_599))
        );
    }

    #[test]
    fn rejects_malformed_dates() {
        for text in [
            "",
            "tomorrow",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 November 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Wed, 31 Apr 2025 08:00:00 GMT",
            "Thu, 29 Feb 2027 08:00:00 GMT",
            "Sun, 00 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94-1 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(text), None, "{text:?}");
        }
    }

    #[test]
    fn formats_what_it_parses() {
        for seconds in [0, RFC_EXAMPLE, 1_835_481_599, 1_700_000_000] {
            let text = format_http_date(at(seconds));
            assert_eq!(parse_http_date(&text), Some(at(seconds)), "{text}");
        }
        assert_eq!(
            format_http_date(at(RFC_EXAMPLE)),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
    }

    fn headers(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn reads_delta_seconds_and_dates() {
        let now = at(RFC_EXAMPLE);
        assert_eq!(
            retry_after(&headers("2"), now),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(&headers(" 120 "), now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            retry_after(&headers("99999999999999999999999"), now),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(
            retry_after(&headers("Sun, 06 Nov 1994 08:49:40 GMT"), now),
            Some(Duration::from_secs(3))
        );
        // A date already past asks for no wait.
        assert_eq!(
            retry_after(&headers("Sun, 06 Nov 1994 08:00:00 GMT"), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers("-1"), now), None);
        assert_eq!(retry_after(&headers("1.5"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }
}
