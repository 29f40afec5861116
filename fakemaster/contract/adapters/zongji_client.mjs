// A CDC client on ZongJi (@vlasky/zongji, or a fork with the same API such as
// @powersync/mysql-zongji), written the way a client author would start one for
// `fakemaster check` (docs/contract.md):
//
//   node zongji_client.mjs HOST PORT OUT        (the rest from FAKEMASTER_* variables)
//
// It starts from the snapshot's rows (an insert's columns a MINIMAL image leaves out take
// their CREATE TABLE default), dumps by file and position from the first file,
// holds a transaction's row changes until its commit (XID, or a COMMIT query for a
// non-transactional group; an XA transaction's until its XA COMMIT, identified by that group's
// GTID) and remembers the position after it. After any fault (a lost
// connection, an error, 3 s without an event, a stream that ends early) it discards the
// unfinished transaction and reconnects from that committed position, so it declares
// exactly-once; an event at or before a position it already read is skipped. It stops once
// its position reaches FAKEMASTER_END_FILE / FAKEMASTER_END_POS and writes its change log and
// final tables.
//
// A client of your own would write `import ZongJi from '@vlasky/zongji'`; this one takes the
// package from FAKEMASTER_ZONGJI_PACKAGE and the node_modules folder from
// FAKEMASTER_NODE_MODULES (both set by fakemaster.contract.adapters.zongji) so one file serves
// both packages from wherever the project installed them.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [host, port, out] = process.argv.slice(2);
const env = process.env;
const packageName = env.FAKEMASTER_ZONGJI_PACKAGE || '@vlasky/zongji';
const endFile = env.FAKEMASTER_END_FILE;
const endPos = Number(env.FAKEMASTER_END_POS);
const READ_TIMEOUT_MS = 3000;
const MAX_CONNECTIONS = 50;

async function loadZongJi(name) {
  const modules = env.FAKEMASTER_NODE_MODULES;
  if (!modules) return (await import(name)).default;
  const dir = path.join(modules, name);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const entry = meta.exports?.['.']?.default || meta.main || 'index.js';
  const loaded = await import(pathToFileURL(path.join(dir, entry)).href);
  return loaded.default?.ZongJi || loaded.default || loaded.ZongJi;
}

// The column definitions of a one-line CREATE TABLE: the body's elements at depth 0.
function columnDefinitions(create) {
  const body = create.slice(create.indexOf('(') + 1);
  const parts = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === "'" || c === '`') {
      quote = c;
    } else if (c === '(') {
      depth += 1;
    } else if (c === ')' && depth-- === 0) {
      parts.push(body.slice(start, i));
      break;
    } else if (c === ',' && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  return parts.map((part) => part.trim()).filter((part) => part.startsWith('`'));
}

// What the server stores for a column an INSERT leaves out (a MINIMAL image does not log it):
// its DEFAULT, or NULL for a nullable column without one.
function columnDefaults(create) {
  const defaults = {};
  for (const definition of columnDefinitions(create)) {
    const name = definition.slice(1, definition.indexOf('`', 1));
    const found = /\bDEFAULT\s+(NULL|'((?:[^']|'')*)'|[-\w.]+)/i.exec(definition);
    if (found) {
      defaults[name] = found[1].toUpperCase() === 'NULL' ? null
        : found[2] !== undefined ? found[2].replace(/''/g, "'") : found[1];
    } else if (!/NOT NULL/i.test(definition)) {
      defaults[name] = null;
    }
  }
  return defaults;
}

// The snapshot: each table's column defaults and initial rows.
function readSnapshot(file) {
  const rows = new Map();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const item = JSON.parse(line);
    if (item.kind === 'table') {
      rows.set(item.table, rows.get(item.table) || []);
      defaults.set(item.table, columnDefaults(item.create));
    } else if (item.kind === 'row') {
      if (!rows.has(item.table)) rows.set(item.table, []);
      rows.get(item.table).push(item.values);
    }
  }
  return rows;
}

// MySQL type codes ZongJi reports in tablemap columns (mysql_com.h enum_field_types).
const T = { TINY: 1, SHORT: 2, LONG: 3, FLOAT: 4, DOUBLE: 5, LONGLONG: 8, INT24: 9, YEAR: 13,
  BIT: 16, ENUM: 247, SET: 248 };

const defaults = new Map(); // table -> column -> default (readSnapshot fills it)

const pad = (n, width = 2) => String(n).padStart(width, '0');

function floatText(value, digits) {
  // MariaDB prints a FLOAT with 6 significant digits and a DOUBLE with the shortest
  // round-trip form; an exponent has no '+' and no leading zero (3.40282e38).
  let text = digits ? String(Number(value.toPrecision(digits))) : String(value);
  if (/e/.test(text)) {
    const [mant, exp] = text.split('e');
    text = `${mant}e${Number(exp)}`;
  }
  return text;
}

// A ZongJi value as the oracle's canonical text (the text MariaDB's SELECT prints).
function cell(value, column) {
  if (value === null || value === undefined) return null;
  const type = column.type;
  if (Buffer.isBuffer(value)) {
    if (type === T.BIT) return BigInt('0x' + (value.toString('hex') || '0')).toString();
    return '0x' + value.toString('hex').toUpperCase();
  }
  if (value instanceof Date) {
    return `${value.getUTCFullYear()}-${pad(value.getUTCMonth() + 1)}-${pad(value.getUTCDate())}`;
  }
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (type === T.FLOAT) return floatText(value, 6);
    if (type === T.DOUBLE) return floatText(value, 0);
    // ZongJi decodes YEAR as 1900 + the stored byte, so the zero year comes as 1900.
    if (type === T.YEAR) return pad(value === 1900 ? 0 : value, 4);
    return String(value);
  }
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const xaKey = (event) => `${event.xidFormatId}:${event.xidGtrid.toString('hex')}:${event.xidBqual.toString('hex')}`;

function bit(bitmap, index) {
  return bitmap ? (bitmap[index >> 3] >> (index & 7)) & 1 : 1;
}

// A row image: only the columns the binlog's image carried (ZongJi gives null for the others).
function image(row, tablemap, bitmap) {
  const cells = {};
  tablemap.columns.forEach((column, i) => {
    if (bit(bitmap, i)) cells[column.name] = cell(row[column.name], column);
  });
  return cells;
}

const same = (row, cells) => Object.entries(cells).every(([name, value]) => row[name] === value);

function apply(tables, change) {
  const rows = tables.get(change.table) || [];
  tables.set(change.table, rows);
  if (change.before) {
    const at = rows.findIndex((row) => same(row, change.before));
    if (at >= 0) {
      if (change.after) rows[at] = { ...rows[at], ...change.after };
      else rows.splice(at, 1);
      return;
    }
  }
  if (change.after) rows.push({ ...defaults.get(change.table), ...change.after });
}

async function main() {
  const ZongJi = await loadZongJi(packageName);
  const tables = readSnapshot(env.FAKEMASTER_SNAPSHOT);
  const log = [];
  let committed = { file: env.FAKEMASTER_FIRST_FILE, pos: 4 };
  let connections = 0;
  let gtidless = false;
  // Prepared XA transactions' changes by xid, kept across reconnects as the server keeps them.
  const held = new Map();

  const caughtUp = () => committed.file === endFile && committed.pos >= endPos;

  // One connection: resolves with the position it reached, rejects with its fault.
  const connect = () => new Promise((resolve, reject) => {
    connections += 1;
    const zongji = new ZongJi({ host, port: Number(port), user: env.FAKEMASTER_USER,
      password: env.FAKEMASTER_PASSWORD, dateStrings: true, supportBigNumbers: true,
      bigNumberStrings: true });
    let file = committed.file;
    let lastRead = committed.pos;
    let pending = [];
    let gtid;
    let row = 0;
    let xa;
    let timer;
    let done = false;
    const finish = (error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      zongji.removeAllListeners('binlog');
      zongji.on('error', () => {});
      try { zongji.stop(); } catch { /* already closed */ }
      if (error) reject(error); else resolve();
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(new Error('read timeout: 3 s without an event')),
        READ_TIMEOUT_MS);
    };
    const commit = (next) => {
      for (const change of pending) {
        log.push(change);
        apply(tables, change);
      }
      pending = [];
      committed = { file, pos: next };
      if (caughtUp()) finish();
    };
    zongji.on('error', (error) => finish(error));
    zongji.on('stopped', () => finish(new Error('the connection was closed')));
    zongji.on('binlog', (event) => {
      arm();
      const name = event.getEventName();
      if (name === 'rotate') {
        if (event.binlogName !== file) { file = event.binlogName; lastRead = 4; }
        return;
      }
      const next = event.nextPosition;
      if (next > 0 && next <= lastRead) return; // a resend of an event already read
      if (next > 0) lastRead = next;
      if (name === 'mariadbgtid' || name === 'gtid') {
        pending = [];
        gtid = event.gtid;
        row = 0;
        xa = event.preparedXa || event.completedXa ? xaKey(event) : undefined;
      } else if (name === 'xaprepare' && !event.onePhase) {
        // XA PREPARE: the changes take effect at its XA COMMIT (a later group), if any.
        held.set(xa, pending);
        pending = [];
        committed = { file, pos: next };
        if (caughtUp()) finish();
      } else if (name === 'query' && /^\s*XA (COMMIT|ROLLBACK)/i.test(event.query)) {
        const prepared = held.get(xa) || [];
        held.delete(xa);
        if (/^\s*XA COMMIT/i.test(event.query)) {
          pending = prepared.map((change, index) => ({ ...change, gtid, row: index, pos: next }));
        }
        commit(next);
      } else if (['writerows', 'updaterows', 'deleterows'].includes(name)) {
        const tablemap = event.tableMap[event.tableId];
        const table = `${tablemap.parentSchema}.${tablemap.tableName}`;
        const txGtid = event.gtid || gtid;
        if (!txGtid) gtidless = true;
        for (const values of event.rows) {
          const change = { op: name === 'writerows' ? 'insert'
            : name === 'updaterows' ? 'update' : 'delete', table, gtid: txGtid, row, file,
          pos: next };
          row += 1;
          if (name === 'updaterows') {
            change.before = image(values.before, tablemap, event.columns_present_bitmap);
            change.after = image(values.after, tablemap, event.columns_present_bitmap2);
          } else if (name === 'writerows') {
            change.after = image(values, tablemap, event.columns_present_bitmap);
          } else {
            change.before = image(values, tablemap, event.columns_present_bitmap);
          }
          pending.push(change);
        }
      } else if (name === 'xid' || (name === 'query' && /^\s*COMMIT/i.test(event.query))) {
        commit(next);
      } else if (name === 'query' && !/^\s*(BEGIN|XA (START|BEGIN|END))/i.test(event.query)) {
        commit(next); // DDL: a group of its own
      } else if (next > 0 && pending.length === 0 && file === endFile && next >= endPos) {
        commit(next);
      }
    });
    arm();
    zongji.start({ filename: committed.file, position: committed.pos,
      serverId: Number(env.FAKEMASTER_SERVER_ID || 1001) });
  });

  while (!caughtUp()) {
    if (connections >= MAX_CONNECTIONS) {
      throw new Error(`gave up after ${connections} connections at ${committed.file}:${committed.pos}`);
    }
    try {
      await connect();
    } catch (error) {
      console.error(`connection ${connections}: ${error.message}; resuming at ${committed.file}:${committed.pos}`);
    }
  }

  const lines = [JSON.stringify({ kind: 'header', client: packageName, guarantee: 'exactly-once',
    changes: !gtidless, tables: true })];
  if (!gtidless) for (const change of log) lines.push(JSON.stringify({ kind: 'change', ...change }));
  for (const [table, rows] of tables) {
    for (const values of rows) lines.push(JSON.stringify({ kind: 'row', table, values }));
  }
  fs.writeFileSync(out, lines.join('\n') + '\n');
  process.exit(0);
}

main().catch((error) => {
  console.error(`Error: ${error.message}`);
  process.exit(1);
});
