/* The injection library's GPU-free parts (event_csv, demangle, nvtx_ranges,
 * pm_options, cupti_activity) are also objects of libtruewatt, where every global symbol
 * carries the library's prefix (tests/meta/static_symbols.sh): their
 * functions are named tw_i_* there and in the injection library alike, while
 * the call sites keep the short twi_* names. */
#ifndef TW_INJECT_TWI_PREFIX_H
#define TW_INJECT_TWI_PREFIX_H

#define twi_memcpy_kind_name tw_i_memcpy_kind_name
#define twi_kind_name tw_i_kind_name
#define twi_clock_calibrate tw_i_clock_calibrate
#define twi_clock_rel_ns tw_i_clock_rel_ns
#define twi_clock_drift_ns tw_i_clock_drift_ns
#define twi_parse_u64 tw_i_parse_u64
#define twi_buf_free tw_i_buf_free
#define twi_buf_put_seconds tw_i_buf_put_seconds
#define twi_buf_put_field tw_i_buf_put_field
#define twi_append_line tw_i_append_line
#define twi_format_uuid tw_i_format_uuid
#define twi_demangler_new tw_i_demangler_new
#define twi_demangler_available tw_i_demangler_available
#define twi_demangler_set_function tw_i_demangler_set_function
#define twi_demangler_cached tw_i_demangler_cached
#define twi_demangle tw_i_demangle
#define twi_demangler_free tw_i_demangler_free
#define twi_nvtx_record tw_i_nvtx_record
#define twi_stack_new tw_i_stack_new
#define twi_stack_push tw_i_stack_push
#define twi_stack_pop tw_i_stack_pop
#define twi_stack_open tw_i_stack_open
#define twi_stack_set_tid tw_i_stack_set_tid
#define twi_stack_tid tw_i_stack_tid
#define twi_stack_free tw_i_stack_free
#define twi_ranges_new tw_i_ranges_new
#define twi_ranges_start tw_i_ranges_start
#define twi_ranges_end tw_i_ranges_end
#define twi_ranges_pending tw_i_ranges_pending
#define twi_ranges_free tw_i_ranges_free
#define twi_pm_parse_interval tw_i_pm_parse_interval
#define twi_pm_parse_windows tw_i_pm_parse_windows
#define twi_cupti_start tw_i_cupti_start
#define twi_cupti_stop tw_i_cupti_stop
#define twi_cupti_flush tw_i_cupti_flush
#define twi_cupti_drain tw_i_cupti_drain
#define twi_cupti_queue tw_i_cupti_queue
#define twi_cupti_learn_devices tw_i_cupti_learn_devices
#define twi_cupti_calibrate tw_i_cupti_calibrate
#define twi_cupti_stats tw_i_cupti_stats
#define twi_cupti_error tw_i_cupti_error
#define twi_cupti_path tw_i_cupti_path
#define twi_cupti_handle tw_i_cupti_handle
#define twi_same_file tw_i_same_file
#define twi_cupti_after_fork tw_i_cupti_after_fork

#endif
