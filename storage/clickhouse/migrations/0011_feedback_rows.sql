-- feedback_rows is feedback as /feedback/query reads it: the stored
-- columns plus the newer scorer and span fields, kept in extra only when
-- set, with the reference's defaults otherwise (empty lists and maps, '',
-- 'UNSET' for span_status_code). A plain view: the project filter of
-- every query reaches the table's primary key through it.
CREATE VIEW IF NOT EXISTS feedback_rows AS
SELECT project_id, id, weave_ref, feedback_type, payload, creator, created_at, wb_user_id,
       annotation_ref, runnable_ref, call_ref, trigger_ref, queue_id,
       if(JSONHas(ifNull(extra, ''), 'scorer_tags'), JSONExtractRaw(ifNull(extra, ''), 'scorer_tags'), '[]') AS scorer_tags,
       if(JSONHas(ifNull(extra, ''), 'scorer_tag_reasons'), JSONExtractRaw(ifNull(extra, ''), 'scorer_tag_reasons'), '{}') AS scorer_tag_reasons,
       if(JSONHas(ifNull(extra, ''), 'scorer_tag_confidences'), JSONExtractRaw(ifNull(extra, ''), 'scorer_tag_confidences'), '{}') AS scorer_tag_confidences,
       if(JSONHas(ifNull(extra, ''), 'scorer_ratings'), JSONExtractRaw(ifNull(extra, ''), 'scorer_ratings'), '{}') AS scorer_ratings,
       if(JSONHas(ifNull(extra, ''), 'scorer_rating_reasons'), JSONExtractRaw(ifNull(extra, ''), 'scorer_rating_reasons'), '{}') AS scorer_rating_reasons,
       if(JSONHas(ifNull(extra, ''), 'scorer_rating_confidences'), JSONExtractRaw(ifNull(extra, ''), 'scorer_rating_confidences'), '{}') AS scorer_rating_confidences,
       if(JSONHas(ifNull(extra, ''), 'span_agent_name'), JSONExtractString(ifNull(extra, ''), 'span_agent_name'), '') AS span_agent_name,
       if(JSONHas(ifNull(extra, ''), 'span_agent_version'), JSONExtractString(ifNull(extra, ''), 'span_agent_version'), '') AS span_agent_version,
       if(JSONHas(ifNull(extra, ''), 'span_status_code'), JSONExtractString(ifNull(extra, ''), 'span_status_code'), 'UNSET') AS span_status_code,
       if(JSONHas(ifNull(extra, ''), 'span_conversation_id'), JSONExtractString(ifNull(extra, ''), 'span_conversation_id'), '') AS span_conversation_id,
       if(JSONHas(ifNull(extra, ''), 'span_trace_id'), JSONExtractString(ifNull(extra, ''), 'span_trace_id'), '') AS span_trace_id,
       if(JSONHas(ifNull(extra, ''), 'scorer_trace_id'), JSONExtractString(ifNull(extra, ''), 'scorer_trace_id'), '') AS scorer_trace_id
FROM feedback;
