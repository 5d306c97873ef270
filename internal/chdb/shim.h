// The C side of the libchdb binding: function pointers resolved with dlsym, and
// the small wrappers Go needs because it cannot call a C function pointer itself.
// Signatures follow chdb.h of libchdb 26.5 (the chdb_connection/chdb_result API).
#ifndef WEFT_CHDB_SHIM_H
#define WEFT_CHDB_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef struct weft_chdb_result_ { void *internal_data; } weft_chdb_result;
typedef struct weft_chdb_conn_ { void *internal_data; } *weft_chdb_conn;

typedef struct weft_chdb_lib {
	void *handle;
	weft_chdb_conn *(*connect)(int argc, char **argv);
	void (*close_conn)(weft_chdb_conn *conn);
	weft_chdb_result *(*query_with_params_n)(weft_chdb_conn conn,
		const char *query, size_t query_len, const char *format, size_t format_len,
		const char *const *names, const size_t *name_lens,
		const char *const *values, const size_t *value_lens, size_t count);
	char *(*result_buffer)(weft_chdb_result *r);
	size_t (*result_length)(weft_chdb_result *r);
	double (*result_elapsed)(weft_chdb_result *r);
	uint64_t (*result_rows_read)(weft_chdb_result *r);
	uint64_t (*result_storage_rows_read)(weft_chdb_result *r);
	uint64_t (*result_storage_bytes_read)(weft_chdb_result *r);
	uint64_t (*result_rows_written)(weft_chdb_result *r);
	uint64_t (*result_bytes_written)(weft_chdb_result *r);
	const char *(*result_error)(weft_chdb_result *r);
	void (*destroy_result)(weft_chdb_result *r);
} weft_chdb_lib;

// Loads the library and resolves every symbol. Returns 0 on success; on failure
// returns -1 and points *err at a malloc'ed message the caller frees.
int weft_chdb_load(const char *path, weft_chdb_lib *lib, char **err);

// Connects with argv, keeping the process's handlers for the fatal signals.
weft_chdb_conn *weft_chdb_connect(weft_chdb_lib *lib, int argc, char **argv);

void weft_chdb_close(weft_chdb_lib *lib, weft_chdb_conn *conn);

weft_chdb_result *weft_chdb_query(weft_chdb_lib *lib, weft_chdb_conn *conn,
	const char *query, size_t query_len, const char *format, size_t format_len,
	const char *const *names, const size_t *name_lens,
	const char *const *values, const size_t *value_lens, size_t count);

// Result accessors in one call, so a query costs two cgo transitions, not nine.
typedef struct weft_chdb_stats {
	const char *buf;
	size_t len;
	const char *error;
	double elapsed;
	uint64_t result_rows, rows_read, bytes_read, rows_written, bytes_written;
} weft_chdb_stats;

void weft_chdb_result_stats(weft_chdb_lib *lib, weft_chdb_result *r, weft_chdb_stats *out);

void weft_chdb_destroy(weft_chdb_lib *lib, weft_chdb_result *r);

#endif
