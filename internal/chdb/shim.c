#include "shim.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_message(const char *prefix, const char *detail) {
	size_t n = strlen(prefix) + (detail ? strlen(detail) : 0) + 1;
	char *s = malloc(n);
	if (s) {
		snprintf(s, n, "%s%s", prefix, detail ? detail : "");
	}
	return s;
}

#define RESOLVE(field, name)                                          \
	do {                                                              \
		*(void **)(&lib->field) = dlsym(h, name);                     \
		if (!lib->field) {                                            \
			*err = dup_message("libchdb lacks symbol ", name);       \
			dlclose(h);                                               \
			return -1;                                                \
		}                                                             \
	} while (0)

int weft_chdb_load(const char *path, weft_chdb_lib *lib, char **err) {
	memset(lib, 0, sizeof(*lib));
	// RTLD_LAZY: the library is over 500 MB and exports thousands of
	// symbols; binding only the dozen used keeps loading fast.
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		*err = dup_message("", dlerror());
		return -1;
	}
	RESOLVE(connect, "chdb_connect");
	RESOLVE(close_conn, "chdb_close_conn");
	RESOLVE(query_with_params_n, "chdb_query_with_params_n");
	RESOLVE(result_buffer, "chdb_result_buffer");
	RESOLVE(result_length, "chdb_result_length");
	RESOLVE(result_elapsed, "chdb_result_elapsed");
	RESOLVE(result_rows_read, "chdb_result_rows_read");
	RESOLVE(result_storage_rows_read, "chdb_result_storage_rows_read");
	RESOLVE(result_storage_bytes_read, "chdb_result_storage_bytes_read");
	RESOLVE(result_rows_written, "chdb_result_rows_written");
	RESOLVE(result_bytes_written, "chdb_result_bytes_written");
	RESOLVE(result_error, "chdb_result_error");
	RESOLVE(destroy_result, "chdb_destroy_query_result");
	lib->handle = h;
	return 0;
}

// Booting the engine replaces the handlers of these signals. The Go runtime
// relies on its own handlers for them to turn a nil dereference into a panic,
// so they are put back once the engine is up. chdb leaves other signals alone.
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define N_FATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))

weft_chdb_conn *weft_chdb_connect(weft_chdb_lib *lib, int argc, char **argv) {
	struct sigaction saved[N_FATAL];
	for (size_t i = 0; i < N_FATAL; i++) {
		sigaction(fatal_signals[i], NULL, &saved[i]);
	}
	weft_chdb_conn *conn = lib->connect(argc, argv);
	for (size_t i = 0; i < N_FATAL; i++) {
		sigaction(fatal_signals[i], &saved[i], NULL);
	}
	return conn;
}

void weft_chdb_close(weft_chdb_lib *lib, weft_chdb_conn *conn) {
	lib->close_conn(conn);
}

weft_chdb_result *weft_chdb_query(weft_chdb_lib *lib, weft_chdb_conn *conn,
	const char *query, size_t query_len, const char *format, size_t format_len,
	const char *const *names, const size_t *name_lens,
	const char *const *values, const size_t *value_lens, size_t count) {
	return lib->query_with_params_n(*conn, query, query_len, format, format_len,
		names, name_lens, values, value_lens, count);
}

void weft_chdb_result_stats(weft_chdb_lib *lib, weft_chdb_result *r, weft_chdb_stats *out) {
	out->error = lib->result_error(r);
	out->buf = lib->result_buffer(r);
	out->len = lib->result_length(r);
	out->elapsed = lib->result_elapsed(r);
	// chdb_result_rows_read counts result rows; what the query read from
	// storage is the storage_* pair.
	out->result_rows = lib->result_rows_read(r);
	out->rows_read = lib->result_storage_rows_read(r);
	out->bytes_read = lib->result_storage_bytes_read(r);
	out->rows_written = lib->result_rows_written(r);
	out->bytes_written = lib->result_bytes_written(r);
}

void weft_chdb_destroy(weft_chdb_lib *lib, weft_chdb_result *r) {
	lib->destroy_result(r);
}
