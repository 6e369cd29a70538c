//! An incremental server-sent events parser: bytes in as they arrive, whole
//! events out. Lines end in `\n`, `\r\n` or `\r`; a blank line ends an event.

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
}

impl SseParser {
    /// Feeds a chunk; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
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
                    self.line(&String::from_utf8_lossy(&line), &mut out);
                }
                _ => self.pending.push(byte),
            }
        }
        out
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
        let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| parser.feed(c)).collect();
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
}
