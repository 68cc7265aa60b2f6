package io.statehouse.clickhouse.embedded;

import com.sun.jna.Library;
import com.sun.jna.Pointer;

/**
 * The part of chDB's C API ({@code chdb.h}) the embedded engine uses, bound with JNA.
 * {@code size_t} and {@code uint64_t} map to {@code long} (LP64); strings are passed as
 * {@code byte[]} with explicit lengths so that binary INSERT data survives.
 */
interface Chdb extends Library {

	/** Must run before the first {@link #chdb_connect}: chDB's handlers hang the JVM. */
	void chdb_set_signal_handlers_enabled(int enabled);

	String chdb_version();

	/** Returns a {@code chdb_connection *}, or {@code null}; the handle is its first word. */
	Pointer chdb_connect(int argc, String[] argv);

	void chdb_close_conn(Pointer connection);

	Pointer chdb_query_n(Pointer conn, byte[] query, long queryLength, byte[] format, long formatLength);

	Pointer chdb_query_with_params_n(Pointer conn, byte[] query, long queryLength, byte[] format,
			long formatLength, Pointer[] names, long[] nameLengths, Pointer[] values, long[] valueLengths,
			long count);

	/** {@code out} is {@code chdb_query_analysis_v1}: struct_size, statement_count, flags, class. */
	int chdb_classify_query_n(Pointer conn, byte[] sql, long sqlLength, Pointer targetDatabase,
			long targetDatabaseLength, int[] out);

	Pointer chdb_result_buffer(Pointer result);

	long chdb_result_length(Pointer result);

	double chdb_result_elapsed(Pointer result);

	long chdb_result_rows_read(Pointer result);

	long chdb_result_bytes_read(Pointer result);

	long chdb_result_storage_rows_read(Pointer result);

	long chdb_result_storage_bytes_read(Pointer result);

	long chdb_result_rows_written(Pointer result);

	long chdb_result_bytes_written(Pointer result);

	String chdb_result_error(Pointer result);

	void chdb_destroy_query_result(Pointer result);

	/** The C library, for pointing the process's stdin away from the engine. */
	interface Libc extends Library {

		int O_RDONLY = 0;

		int open(String path, int flags);

		int dup2(int from, int to);

		int close(int fd);

	}

}
