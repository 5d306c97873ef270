-- feedback_rows is feedback as /feedback/query reads it: the stored
-- columns plus the newer scorer and span fields, kept in extra only when
-- set, with the reference's defaults otherwise (empty lists and maps, '',
-- 'UNSET' for span_status_code).
CREATE OR REPLACE VIEW feedback_rows AS
SELECT project_id, id, weave_ref, feedback_type, payload, creator, created_at, wb_user_id,
       annotation_ref, runnable_ref, call_ref, trigger_ref, queue_id,
       coalesce(json_extract(extra, '$.scorer_tags')::VARCHAR, '[]') AS scorer_tags,
       coalesce(json_extract(extra, '$.scorer_tag_reasons')::VARCHAR, '{}') AS scorer_tag_reasons,
       coalesce(json_extract(extra, '$.scorer_tag_confidences')::VARCHAR, '{}') AS scorer_tag_confidences,
       coalesce(json_extract(extra, '$.scorer_ratings')::VARCHAR, '{}') AS scorer_ratings,
       coalesce(json_extract(extra, '$.scorer_rating_reasons')::VARCHAR, '{}') AS scorer_rating_reasons,
       coalesce(json_extract(extra, '$.scorer_rating_confidences')::VARCHAR, '{}') AS scorer_rating_confidences,
       coalesce(json_extract_string(extra, '$.span_agent_name'), '') AS span_agent_name,
       coalesce(json_extract_string(extra, '$.span_agent_version'), '') AS span_agent_version,
       coalesce(json_extract_string(extra, '$.span_status_code'), 'UNSET') AS span_status_code,
       coalesce(json_extract_string(extra, '$.span_conversation_id'), '') AS span_conversation_id,
       coalesce(json_extract_string(extra, '$.span_trace_id'), '') AS span_trace_id,
       coalesce(json_extract_string(extra, '$.scorer_trace_id'), '') AS scorer_trace_id
FROM feedback;
