//! The sources an answer cites, read from the folded parts of every
//! dialect, as the AI SDK's `source-url` / `source-document` chunks and
//! `text-end` `citations` show them.
//!
//! | dialect | where | url source | document source |
//! | --- | --- | --- | --- |
//! | Anthropic | text block `citations` | `web_search_result_location` (`url`, `title`), `search_result_location` whose `source` is a URL | `char_location` / `content_block_location` (`text/plain`), `page_location` (`application/pdf`), titled `document_title`; other `search_result_location`s |
//! | OpenAI Responses | `output_text` `annotations`, else those of the part's `response.output_text.annotation.added` events | `url_citation` (`url`, `title`, `start_index`, `end_index`) | `file_citation`, `container_file_citation` (`text/plain`, `filename`), `file_path` (`application/octet-stream`) |
//! | Bedrock Converse | `citationsContent.citations` | `location.web` (`url`, `title`) | any other location (`documentPage`: `application/pdf`; else `text/plain`), titled `title` / `source` |
//! | Gemini | candidate `groundingMetadata.groundingChunks`, `citationMetadata` | `web` / `retrievedContext` with a `uri`, citations with a `uri` | `retrievedContext` without one (`text/plain`) |

use serde_json::{json, Map, Value};

/// A cited source.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source<'a> {
    Url { url: &'a str, title: Option<&'a str> },
    Document { media_type: &'static str, title: String, filename: Option<&'a str> },
}

impl Source<'_> {
    /// What makes two citations one source: the URL, or the document's
    /// title and file name.
    pub(crate) fn key(&self) -> String {
        match self {
            Source::Url { url, .. } => format!("url:{url}"),
            Source::Document { title, filename, .. } => format!("doc:{title}\u{0}{}", filename.unwrap_or("")),
        }
    }

    /// The citation's `source` object (`LanguageModelV4Source`).
    fn to_json(&self, id: &str) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), "source".into());
        match self {
            Source::Url { url, title } => {
                m.insert("sourceType".into(), "url".into());
                m.insert("id".into(), id.into());
                m.insert("url".into(), (*url).into());
                if let Some(title) = title {
                    m.insert("title".into(), (*title).into());
                }
            }
            Source::Document { media_type, title, filename } => {
                m.insert("sourceType".into(), "document".into());
                m.insert("id".into(), id.into());
                m.insert("mediaType".into(), (*media_type).into());
                m.insert("title".into(), title.as_str().into());
                if let Some(filename) = filename {
                    m.insert("filename".into(), (*filename).into());
                }
            }
        }
        Value::Object(m)
    }
}

/// One citation of a text part: its source, where it sits in the text
/// (when the provider says), the passage cited.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Citation<'a> {
    pub(crate) source: Source<'a>,
    start: Option<u64>,
    end: Option<u64>,
    cited_text: Option<&'a str>,
}

impl Citation<'_> {
    /// The `text-end` citation (`LanguageModelV4Citation`) whose source
    /// has `sourceId` `id`.
    pub(crate) fn to_json(&self, id: &str) -> Value {
        let mut v = json!({ "source": self.source.to_json(id) });
        if let Some(start) = self.start {
            v["startIndex"] = start.into();
        }
        if let Some(end) = self.end {
            v["endIndex"] = end.into();
        }
        if let Some(text) = self.cited_text {
            v["citedText"] = text.into();
        }
        v
    }
}

/// A file's bytes: raw, or already base64.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FileData<'a> {
    Bytes(&'a [u8]),
    Base64(&'a str),
}

impl FileData<'_> {
    /// The length of the base64 text, about.
    pub(crate) fn len(&self) -> usize {
        match self {
            FileData::Bytes(b) => b.len() * 4 / 3 + 4,
            FileData::Base64(t) => t.len(),
        }
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn is_url(text: &str) -> bool {
    text.starts_with("https://") || text.starts_with("http://")
}

/// The citations of a folded text part (Anthropic `citations`, Responses
/// `annotations`, Converse `citationsContent.citations`), in order.
pub(crate) fn citations(content: &Value) -> Vec<Citation<'_>> {
    let mut out = Vec::new();
    if let Some(list) = content.get("citations").and_then(Value::as_array) {
        out.extend(list.iter().filter_map(anthropic_citation));
    }
    if let Some(list) = content.get("annotations").and_then(Value::as_array) {
        out.extend(annotations(list));
    }
    if let Some(list) = content.pointer("/citationsContent/citations").and_then(Value::as_array) {
        out.extend(list.iter().filter_map(converse_citation));
    }
    out
}

fn anthropic_citation(c: &Value) -> Option<Citation<'_>> {
    let cited_text = str_of(c, "cited_text");
    let document = |media_type| {
        let title = match str_of(c, "document_title") {
            Some(title) => title.to_owned(),
            None => format!("Document {}", c.get("document_index").and_then(Value::as_u64).unwrap_or(0)),
        };
        Source::Document { media_type, title, filename: None }
    };
    let source = match str_of(c, "type")? {
        "web_search_result_location" => Source::Url { url: str_of(c, "url")?, title: str_of(c, "title") },
        "char_location" | "content_block_location" => document("text/plain"),
        "page_location" => document("application/pdf"),
        "search_result_location" => match str_of(c, "source")? {
            url if is_url(url) => Source::Url { url, title: str_of(c, "title") },
            source => Source::Document {
                media_type: "text/plain",
                title: str_of(c, "title").unwrap_or(source).to_owned(),
                filename: None,
            },
        },
        _ => Source::Url { url: str_of(c, "url")?, title: str_of(c, "title") },
    };
    Some(Citation { source, start: None, end: None, cited_text })
}

/// The citations of Responses annotations (an `output_text`'s, or those
/// of its `response.output_text.annotation.added` events).
pub(crate) fn annotations(list: &[Value]) -> impl Iterator<Item = Citation<'_>> {
    list.iter().filter_map(responses_annotation)
}

fn responses_annotation(a: &Value) -> Option<Citation<'_>> {
    let index = |key| a.get(key).and_then(Value::as_u64);
    let (source, start, end) = match str_of(a, "type")? {
        "url_citation" => (
            Source::Url { url: str_of(a, "url")?, title: str_of(a, "title") },
            index("start_index"),
            index("end_index"),
        ),
        "file_citation" | "container_file_citation" => {
            let filename = str_of(a, "filename");
            let title = filename.or_else(|| str_of(a, "file_id"))?.to_owned();
            (Source::Document { media_type: "text/plain", title, filename }, index("start_index"), index("end_index"))
        }
        "file_path" => {
            let title = str_of(a, "file_id")?.to_owned();
            (Source::Document { media_type: "application/octet-stream", title, filename: None }, None, None)
        }
        _ => return None,
    };
    let (start, end) = match (start, end) {
        (Some(s), Some(e)) if s <= e => (Some(s), Some(e)),
        _ => (None, None),
    };
    Some(Citation { source, start, end, cited_text: None })
}

fn converse_citation(c: &Value) -> Option<Citation<'_>> {
    let location = c.get("location");
    let cited_text = c.pointer("/sourceContent/0/text").and_then(Value::as_str);
    let source = match location.and_then(|l| l.get("web")).and_then(|w| str_of(w, "url")) {
        Some(url) => Source::Url { url, title: str_of(c, "title") },
        None => {
            let pdf = location.is_some_and(|l| l.get("documentPage").is_some());
            let title = str_of(c, "title").or_else(|| str_of(c, "source")).unwrap_or("Document").to_owned();
            Source::Document { media_type: if pdf { "application/pdf" } else { "text/plain" }, title, filename: None }
        }
    };
    Some(Citation { source, start: None, end: None, cited_text })
}

/// The sources of a Gemini candidate: its grounding chunks, then its
/// citations (Vertex `citations`, Gemini API `citationSources`).
pub(crate) fn grounding_sources(candidate: &Value) -> Vec<Source<'_>> {
    let mut out = Vec::new();
    let chunks = candidate.pointer("/groundingMetadata/groundingChunks").and_then(Value::as_array);
    for chunk in chunks.into_iter().flatten() {
        let Some(inner) = chunk.get("web").or_else(|| chunk.get("retrievedContext")) else { continue };
        match str_of(inner, "uri") {
            Some(url) => out.push(Source::Url { url, title: str_of(inner, "title") }),
            None => {
                let Some(title) = str_of(inner, "title") else { continue };
                out.push(Source::Document { media_type: "text/plain", title: title.to_owned(), filename: None });
            }
        }
    }
    let citations = ["/citationMetadata/citations", "/citationMetadata/citationSources"]
        .iter()
        .filter_map(|at| candidate.pointer(at).and_then(Value::as_array))
        .flatten();
    for citation in citations {
        if let Some(url) = str_of(citation, "uri") {
            out.push(Source::Url { url, title: str_of(citation, "title") });
        }
    }
    out
}
