import { render } from 'preact';
import 'uplot/dist/uPlot.min.css';
import { App } from './App.js';
import { createStore } from './store.js';
import './style.css';

// troupe's web inspector: connects to the server that served it and shows the run it streams.
const actions = createStore();
actions.connect();
render(<App actions={actions} />, document.getElementById('app')!);
