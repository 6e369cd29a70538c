//! An incremental server-sent events parser: bytes in as they arrive, whole
//! events out. Lines end in `\n`, `\r\n` or `\r`; a blank line ends an event.
//! The model clients read their streamed answers with it, and the MCP
//! client the legacy HTTP+SSE transport.
//!
//! What the parser holds is bounded: an event larger than
//! [`MAX_EVENT_BYTES`] is an error, not a buffer that grows as long as a
//! peer sends.

use std::fmt;

/// The largest event read: its unfinished line and its data so far.
pub(crate) const MAX_EVENT_BYTES: usize = 64 << 20;

/// An event of the stream grew past [`MAX_EVENT_BYTES`].
#[derive(Debug)]
pub(crate) struct EventTooLarge;

impl fmt::Display for EventTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an event of the stream is larger than {MAX_EVENT_BYTES} bytes")
    }
}

/// One event: its `event:` name (`message` when none) and its `data:` lines
/// joined by `\n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

#[derive(Debug, Default)]
pub(crate) struct SseParser {
    pending: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    after_cr: bool,
    /// The stream is past where a byte order mark may be.
    past_bom: bool,
    /// How many bytes of a byte order mark opened the stream so far (it
    /// may come split over chunks).
    bom_read: usize,
}

/// The UTF-8 byte order mark, which may open the stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    /// Feeds a chunk; returns the events it completed, or an error once
    /// the event being read is larger than [`MAX_EVENT_BYTES`].
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<Vec<SseEvent>, EventTooLarge> {
        let mut out = Vec::new();
        while !self.past_bom
            && let Some((&byte, rest)) = chunk.split_first()
        {
            if byte == BOM[self.bom_read] {
                self.bom_read += 1;
                self.past_bom = self.bom_read == BOM.len();
                chunk = rest;
            } else {
                // No mark: what looked like its start is text.
                self.past_bom = true;
                self.read(&BOM[..self.bom_read], &mut out);
            }
        }
        self.read(chunk, &mut out);
        if self.pending.len() + self.data.len() > MAX_EVENT_BYTES {
            return Err(EventTooLarge);
        }
        Ok(out)
    }

    /// Reads bytes of the stream, past its byte order mark.
    fn read(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        for &byte in chunk {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.pending);
                    self.line(&String::from_utf8_lossy(&line), out);
                }
                _ => self.pending.push(byte),
            }
        }
    }

    /// Ends the stream: an event not closed by a blank line still counts.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let mut out = Vec::new();
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.line(&String::from_utf8_lossy(&line), &mut out);
        }
        self.line("", &mut out);
        out.pop()
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                let event = std::mem::take(&mut self.event);
                out.push(SseEvent {
                    event: if event.is_empty() { "message".to_owned() } else { event },
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event.clear();
            self.has_data = false;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_owned(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| parser.feed(c).unwrap()).collect();
        out.extend(parser.finish());
        out
    }

    #[test]
    fn events_split_anywhere_come_out_whole() {
        let text =
            b"event: ping\ndata: {\"type\": \"ping\"}\n\n: comment\r\nevent: x\r\ndata: a\r\ndata: b\r\n\r\ndata: last";
        let whole = all(&[text]);
        for cut in 0..text.len() {
            assert_eq!(all(&[&text[..cut], &text[cut..]]), whole, "cut at {cut}");
        }
        assert_eq!(
            whole,
            vec![
                SseEvent {
                    event: "ping".into(),
                    data: "{\"type\": \"ping\"}".into()
                },
                SseEvent {
                    event: "x".into(),
                    data: "a\nb".into()
                },
                SseEvent {
                    event: "message".into(),
                    data: "last".into()
                },
            ]
        );
    }

    #[test]
    fn a_byte_order_mark_opening_the_stream_is_skipped() {
        let events = all(&[b"\xEF\xBB\xBFevent: endpoint\ndata: /m\n\n"]);
        assert_eq!(events[0].event, "endpoint");
        // Split over chunks, an empty one first.
        let events = all(&[b"", b"\xEF", b"\xBB", b"\xBFevent: endpoint\ndata: /m\n\n"]);
        assert_eq!(events[0].event, "endpoint");
        // Only at the very start.
        let events = all(&[b"event: a\ndata: \xEF\xBB\xBFx\n\n"]);
        assert_eq!(events[0].data, "\u{feff}x");
        // A start that turns out to be no mark is text.
        let events = all(&[b"\xEF", b"x\ndata: y\n\n"]);
        assert_eq!(events[0].data, "y");
    }

    #[test]
    fn an_endless_event_is_an_error() {
        let mut parser = SseParser::default();
        let line = vec![b'x'; 1 << 20];
        let error = (0..100).find_map(|_| parser.feed(&line).err()).expect("an error");
        assert!(error.to_string().contains("larger than"), "{error}");
        // Data lines count too, though each line ends.
        let mut parser = SseParser::default();
        let mut data = b"data: ".to_vec();
        data.extend(vec![b'y'; 1 << 20]);
        data.push(b'\n');
        assert!((0..100).any(|_| parser.feed(&data).is_err()));
    }
}
