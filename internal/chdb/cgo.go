package chdb

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"
)

// library is a loaded libchdb with its symbols resolved.
type library struct {
	path string
	c    *C.weft_chdb_lib
}

func loadLibrary(path string) (*library, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	lib := (*C.weft_chdb_lib)(C.calloc(1, C.size_t(unsafe.Sizeof(C.weft_chdb_lib{}))))
	var cerr *C.char
	if C.weft_chdb_load(cpath, lib, &cerr) != 0 {
		C.free(unsafe.Pointer(lib))
		msg := C.GoString(cerr)
		C.free(unsafe.Pointer(cerr))
		return nil, fmt.Errorf("load %s: %s", path, msg)
	}
	return &library{path: path, c: lib}, nil
}

// rawConn is one chdb connection: a session with its own settings and current
// database. It runs one statement at a time; callers serialise use.
type rawConn struct {
	lib *library
	c   *C.weft_chdb_conn
}

func (l *library) connect(args []string) (*rawConn, error) {
	argv := make([]*C.char, len(args))
	for i, a := range args {
		argv[i] = C.CString(a)
	}
	defer func() {
		for _, p := range argv {
			C.free(unsafe.Pointer(p))
		}
	}()
	cargv := (**C.char)(C.malloc(C.size_t(len(argv)) * C.size_t(unsafe.Sizeof(argv[0]))))
	defer C.free(unsafe.Pointer(cargv))
	copy(unsafe.Slice(cargv, len(argv)), argv)
	conn := C.weft_chdb_connect(l.c, C.int(len(args)), cargv)
	if conn == nil {
		return nil, errors.New("chdb_connect returned no connection (is the data directory locked by another process?)")
	}
	return &rawConn{lib: l, c: conn}, nil
}

func (c *rawConn) close() {
	if c.c != nil {
		C.weft_chdb_close(c.lib.c, c.c)
		c.c = nil
	}
}

// query runs one statement. Parameter names and values are copied into one C
// allocation because C may not keep pointers into Go memory that holds pointers.
func (c *rawConn) query(sql, format string, params []Param) (*Result, error) {
	args := newCParams(params)
	defer args.free()
	if format == "" {
		// The engine remembers a connection's last format; never rely on it.
		format = "TabSeparated"
	}
	csql, sqlLen := stringArg(sql)
	cfmt, fmtLen := stringArg(format)
	res := C.weft_chdb_query(c.lib.c, c.c, csql, sqlLen, cfmt, fmtLen,
		args.names, args.nameLens, args.values, args.valueLens, C.size_t(len(params)))
	if res == nil {
		return nil, errors.New("chdb returned no result")
	}
	defer C.weft_chdb_destroy(c.lib.c, res)
	var st C.weft_chdb_stats
	C.weft_chdb_result_stats(c.lib.c, res, &st)
	if st.error != nil {
		if msg := C.GoString(st.error); msg != "" {
			return nil, parseError(msg)
		}
	}
	out := &Result{
		Elapsed:      time.Duration(float64(st.elapsed) * float64(time.Second)),
		ResultRows:   uint64(st.result_rows),
		RowsRead:     uint64(st.rows_read),
		BytesRead:    uint64(st.bytes_read),
		RowsWritten:  uint64(st.rows_written),
		BytesWritten: uint64(st.bytes_written),
	}
	if st.buf != nil && st.len > 0 {
		out.Data = C.GoBytes(unsafe.Pointer(st.buf), C.int(st.len))
	}
	return out, nil
}

// stringArg passes Go string memory to C for the duration of one call; C
// copies what it keeps. The pointer is never nil so C sees a valid buffer.
func stringArg(s string) (*C.char, C.size_t) {
	if s == "" {
		s = "\x00"
		return (*C.char)(unsafe.Pointer(unsafe.StringData(s))), 0
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.size_t(len(s))
}

type cParams struct {
	block     unsafe.Pointer
	names     **C.char
	values    **C.char
	nameLens  *C.size_t
	valueLens *C.size_t
}

func newCParams(params []Param) cParams {
	if len(params) == 0 {
		return cParams{}
	}
	n := len(params)
	ptrSize, lenSize := C.size_t(unsafe.Sizeof((*C.char)(nil))), C.size_t(unsafe.Sizeof(C.size_t(0)))
	var p cParams
	p.names = (**C.char)(C.malloc(C.size_t(n) * ptrSize))
	p.values = (**C.char)(C.malloc(C.size_t(n) * ptrSize))
	p.nameLens = (*C.size_t)(C.malloc(C.size_t(n) * lenSize))
	p.valueLens = (*C.size_t)(C.malloc(C.size_t(n) * lenSize))
	total := 1
	for _, prm := range params {
		total += len(prm.Name) + len(prm.Value)
	}
	p.block = C.malloc(C.size_t(total))
	buf := unsafe.Slice((*byte)(p.block), total)
	names, values := unsafe.Slice(p.names, n), unsafe.Slice(p.values, n)
	nameLens, valueLens := unsafe.Slice(p.nameLens, n), unsafe.Slice(p.valueLens, n)
	off := 0
	for i, prm := range params {
		names[i], nameLens[i] = (*C.char)(unsafe.Pointer(&buf[off])), C.size_t(len(prm.Name))
		off += copy(buf[off:], prm.Name)
		values[i], valueLens[i] = (*C.char)(unsafe.Pointer(&buf[off])), C.size_t(len(prm.Value))
		off += copy(buf[off:], prm.Value)
	}
	return p
}

func (p cParams) free() {
	for _, ptr := range []unsafe.Pointer{p.block, unsafe.Pointer(p.names), unsafe.Pointer(p.values),
		unsafe.Pointer(p.nameLens), unsafe.Pointer(p.valueLens)} {
		if ptr != nil {
			C.free(ptr)
		}
	}
}
