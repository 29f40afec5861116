// Runs prepared statements with mysql2's execute() and prints what the application sees, as
// JSON: for each call its rows and the column names and types, or its error. The integration
// test (tests/integration/test_mysql2_execute.py) runs it against fakemaster and a real
// MariaDB holding the same tables and compares the two outputs.
//
// Usage: node execute_client.js '{"host": ..., "port": ..., "user": ..., "password": ...,
//   "database": ..., "calls": [[sql, [param, ...]], ...]}'
// A parameter {"$date": "2024-01-02T03:04:05.678Z"} is passed as a JavaScript Date,
// {"$buffer": "hex"} as a Buffer, {"$bigint": "digits"} as a BigInt.
"use strict";
const mysql = require("mysql2/promise");

function param(value) {
  if (value !== null && typeof value === "object" && "$date" in value) {
    return new Date(value["$date"]);
  }
  if (value !== null && typeof value === "object" && "$buffer" in value) {
    return Buffer.from(value["$buffer"], "hex");
  }
  if (value !== null && typeof value === "object" && "$bigint" in value) {
    return BigInt(value["$bigint"]);
  }
  return value;
}

async function main() {
  const spec = JSON.parse(process.argv[2]);
  const connection = await mysql.createConnection({
    host: spec.host,
    port: spec.port,
    user: spec.user,
    password: spec.password,
    database: spec.database,
    timezone: "Z",
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  const out = [];
  for (const [sql, params] of spec.calls) {
    try {
      const [rows, fields] = await connection.execute(sql, params.map(param));
      out.push({
        sql,
        rows,
        fields: (fields || []).map((f) => [f.name, f.columnType, f.columnLength, f.flags]),
      });
    } catch (error) {
      out.push({ sql, error: [error.errno, error.sqlState, error.sqlMessage] });
    }
  }
  await connection.end();
  process.stdout.write(JSON.stringify(out, null, 1) + "\n");
}

main().catch((error) => {
  process.stderr.write(`execute_client: ${error.stack || error}\n`);
  process.exit(1);
});
