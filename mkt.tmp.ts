// scratch: µs per trader turn, 1000 traders
import { messaging } from './bench/messaging.ts';
await messaging([{ traders: 1000, rounds: 10 }, { traders: 1000, rounds: 10 }, { traders: 1000, rounds: 10 }]);
